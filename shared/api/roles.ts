/**
 * Who may call each endpoint when the API server runs with AUTH_MODE=oidc: the role table, beside the route table
 * (routes.ts spreads each entry's access into its definition). `satisfies Record<EndpointName, Access>` makes a new
 * endpoint without an entry a type error, and test/api/auth-roles.test.ts checks the served routes against it.
 * Roles are Keycloak realm roles (`realm_access.roles` of the access token); an administrator is also a user.
 */
import type { EndpointName } from './endpoints.js';

export const ROLES = ['biometric-user', 'biometric-admin'] as const;
export type Role = (typeof ROLES)[number];

/** `public`: no token needed (probes, the API's own description, what the web app needs to sign in). */
export type Access = 'public' | Role;

const PUBLIC = 'public';
const USER = 'biometric-user';
const ADMIN = 'biometric-admin';

export const ROUTE_ACCESS = {
  health: PUBLIC,
  ready: PUBLIC,
  authConfig: PUBLIC,
  openapi: PUBLIC,
  docs: PUBLIC,
  docsAsset: PUBLIC,
  recognize: USER,
  // 1:1 against one person's samples: the identity provider's face step (its service client) and kiosks.
  verify: USER,
  labels: USER,
  trainStatus: USER,
  modelsConfig: USER,
  modelsAvailable: USER,
  // The decision rule in force: what a user's answers mean.
  thresholds: USER,
  // The browser-first pages recognise with the trained models in the browser, so a user downloads them.
  trainedModels: USER,
  trainedLbph: USER,
  trainedEmbedding: USER,
  detectObjects: USER,
  objectClasses: USER,
  objectStatus: USER,
  // Devices send the results they computed in the browser; reading the history is a read.
  storeResults: USER,
  results: USER,
  chat: USER,
  chatStatus: USER,
  processorStatus: USER,
  ppeDetect: USER,
  ppeStatus: USER,
  ppeEvents: USER,
  uploadImage: ADMIN,
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
} as const satisfies Record<EndpointName, Access>;

/** Whether a token holding `roles` may call an endpoint that needs `required`; an administrator may do what a user may. */
export function roleAllows(required: Access, roles: readonly string[]): boolean {
  if (required === 'public') return true;
  if (roles.includes(required)) return true;
  return required === USER && roles.includes(ADMIN);
}

/** The route table's entries, each with its access from ROUTE_ACCESS (routes.ts builds `apiRoutes` with this). */
export function withAccess<T extends Record<EndpointName, object>>(routes: T): { [K in keyof T]: T[K] & { access: Access } } {
  const out: Record<string, object> = {};
  for (const [name, route] of Object.entries(routes)) out[name] = { ...route, access: ROUTE_ACCESS[name as EndpointName] };
  return out as { [K in keyof T]: T[K] & { access: Access } };
}
