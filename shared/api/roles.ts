/**
 * Who may call each endpoint when the API server runs with AUTH_MODE=oidc: the role table, beside the route table
 * (routes.ts spreads each entry's access into its definition). `satisfies Record<EndpointName, Access>` makes a new
 * endpoint without an entry a type error, and test/api/auth-roles.test.ts checks the served routes against it.
 * Roles are Keycloak realm roles (`realm_access.roles` of the access token); an administrator is also a user.
 */
import type { EndpointName } from './endpoints.js';

// #26 audit: biometric-device, for kiosks and devices that recognise offline with the downloaded templates.
// #35: biometric-verifier, for the identity provider's service client: verifies anyone's face (POST /api/verify).
export const ROLES = ['biometric-user', 'biometric-admin', 'biometric-device', 'biometric-verifier'] as const;
export type Role = (typeof ROLES)[number];

/** `public`: no token needed (probes, the API's own description, what the web app needs to sign in). */
export type Access = 'public' | Role;

const PUBLIC = 'public';
const USER = 'biometric-user';
const ADMIN = 'biometric-admin';
const DEVICE = 'biometric-device';
/** #35: verifies any label and is told the distance; without it, a user verifies only their own label. */
export const VERIFIER = 'biometric-verifier';

export const ROUTE_ACCESS = {
  health: PUBLIC,
  ready: PUBLIC,
  authConfig: PUBLIC,
  openapi: PUBLIC,
  docs: PUBLIC,
  docsAsset: PUBLIC,
  recognize: USER,
  // The original's facial analysis: a recognition with features (and objects)
  analyze: USER,
  // 1:1 against one person's samples. #35: a user verifies only their own label, and is not told the distance;
  // anyone's, with the distance, takes biometric-verifier (the identity provider's service client) or biometric-admin
  // (mayVerifyAnyone, checked by the handler).
  verify: USER,
  labels: USER,
  trainStatus: USER,
  modelsConfig: USER,
  modelsAvailable: USER,
  // The decision rule in force: what a user's answers mean.
  thresholds: USER,
  // #26 audit: the trained models hold the templates of everyone enrolled (the second factor's people too): only
  // kiosks and devices that recognise offline (biometric-device) and administrators download them. A plain user's
  // browser-first pages recognise on the server instead.
  trainedModels: DEVICE,
  trainedLbph: DEVICE,
  trainedEmbedding: DEVICE,
  // #26 corrections: the "not X" templates of the kiosk gallery's people, with the models they correct.
  trainedCorrections: DEVICE,
  // #27 the same templates in compact form
  trainedCompact: DEVICE,
  trainedCompactSegments: DEVICE,
  detectObjects: USER,
  objectClasses: USER,
  objectStatus: USER,
  // Devices send the results they computed in the browser; reading the history is a read.
  storeResults: USER,
  // #26 deletion: devices drop what they queue of deleted people
  deletedPeople: USER,
  results: USER,
  chat: USER,
  chatStatus: USER,
  processorStatus: USER,
  ppeDetect: USER,
  ppeStatus: USER,
  ppeEvents: USER,
  uploadImage: ADMIN,
  // #26 enrollment: a check before an upload, by whoever uploads (nothing is stored).
  checkImage: ADMIN,
  deleteLabel: ADMIN,
  deleteImage: ADMIN,
  // The stored training photographs are the raw biometric data of everyone enrolled: only those who manage the
  // training data see them (a user sees the labels and counts).
  labelImages: ADMIN,
  imageFile: ADMIN,
  train: ADMIN,
  setModelsConfig: ADMIN,
  setDetection: ADMIN,
  setThresholds: ADMIN,
  // Distances among the enrolled people's training samples: biometric detail of everyone enrolled.
  previewThresholds: ADMIN,
  // Every checked frame with its labels: pictures of the workers, exported as training data.
  ppeDataset: ADMIN,
  // #26 sightings: faces the service saw (strangers' too), with their crops: biometric data.
  sightings: ADMIN,
  sighting: ADMIN,
  sightingCrop: ADMIN,
  deleteSighting: ADMIN,
  purgeSightings: ADMIN,
  // #36 4: counts only, no face; read where the sightings are.
  sightingsStatus: ADMIN,
  // #26 audit: who did what with biometric data; whether kiosks get a person's templates.
  auditLog: ADMIN,
  updatePerson: ADMIN,
  // #36 2: a person's photos and sightings are biometric data (read as labelImages is), and changing who they are
  // of (rename, cover, merge, move, undo) is an administrator's; search by face answers sightings of anyone.
  personPage: ADMIN,
  renamePerson: ADMIN,
  setPersonCover: ADMIN,
  mergePerson: ADMIN,
  movePhotos: ADMIN,
  undoPersonAction: ADMIN,
  searchFaces: ADMIN,
  // #26 review: faces the service saw (crops of strangers included) and their use as training data.
  reviewGroups: ADMIN,
  reviewPeople: ADMIN,
  reviewAssign: ADMIN,
  reviewDismiss: ADMIN,
  reviewActions: ADMIN,
  reviewUndo: ADMIN,
  reviewApart: ADMIN,
  // #26 corrections: a face's features kept as "not this person" (biometric data of the face corrected).
  createCorrection: ADMIN,
  corrections: ADMIN,
  deleteCorrection: ADMIN,
} as const satisfies Record<EndpointName, Access>;

/**
 * Whether a token holding `roles` may call an endpoint that needs `required`: an administrator may do what a user
 * or a device may, and a device (a kiosk) what a user may.
 */
export function roleAllows(required: Access, roles: readonly string[]): boolean {
  if (required === 'public') return true;
  if (roles.includes(required)) return true;
  if (required === USER) return roles.includes(ADMIN) || roles.includes(DEVICE);
  return required === DEVICE && roles.includes(ADMIN);
}

/** #35: whether a token holding `roles` may verify any label and be told the distance (POST /api/verify). */
export function mayVerifyAnyone(roles: readonly string[]): boolean {
  return roles.includes(VERIFIER) || roles.includes(ADMIN);
}

/** The route table's entries, each with its access from ROUTE_ACCESS (routes.ts builds `apiRoutes` with this). */
export function withAccess<T extends Record<EndpointName, object>>(routes: T): { [K in keyof T]: T[K] & { access: Access } } {
  const out: Record<string, object> = {};
  for (const [name, route] of Object.entries(routes)) out[name] = { ...route, access: ROUTE_ACCESS[name as EndpointName] };
  return out as { [K in keyof T]: T[K] & { access: Access } };
}
