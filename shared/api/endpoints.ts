/**
 * Every endpoint's method and path (relative to /api), and nothing else: the typed client (client.ts) sends
 * requests with this at run time, so a browser bundle carries no zod schemas. The route table (routes.ts) spreads
 * each entry into its full definition, so a path is written once.
 */
export const ENDPOINTS = {
  health: { method: 'get', path: '/health' },
  ready: { method: 'get', path: '/ready' },
  authConfig: { method: 'get', path: '/auth/config' },
  recognize: { method: 'post', path: '/recognize' },
  verify: { method: 'post', path: '/verify' },
  analyze: { method: 'post', path: '/analyze' },
  uploadImage: { method: 'post', path: '/images' },
  // #26 enrollment
  checkImage: { method: 'post', path: '/images/check' },
  labelImages: { method: 'get', path: '/images/{label}' },
  imageFile: { method: 'get', path: '/images/{label}/{filename}' },
  deleteLabel: { method: 'delete', path: '/images/{label}' },
  deleteImage: { method: 'delete', path: '/images/{label}/{filename}' },
  labels: { method: 'get', path: '/labels' },
  train: { method: 'post', path: '/train' },
  trainStatus: { method: 'get', path: '/train/status' },
  modelsConfig: { method: 'get', path: '/models/config' },
  setModelsConfig: { method: 'put', path: '/models/config' },
  setDetection: { method: 'put', path: '/models/detection' },
  modelsAvailable: { method: 'get', path: '/models/available' },
  thresholds: { method: 'get', path: '/models/thresholds' },
  setThresholds: { method: 'put', path: '/models/thresholds' },
  previewThresholds: { method: 'post', path: '/models/thresholds/preview' },
  trainedModels: { method: 'get', path: '/models/trained' },
  trainedLbph: { method: 'get', path: '/models/trained/lbph' },
  trainedEmbedding: { method: 'get', path: '/models/trained/embedding' },
  trainedCorrections: { method: 'get', path: '/models/trained/corrections' },
  // #27 compact browser models
  trainedCompact: { method: 'get', path: '/models/trained/compact' },
  trainedCompactSegments: { method: 'get', path: '/models/trained/compact/segments' },
  // #26 sightings
  sightings: { method: 'get', path: '/sightings' },
  // #36 4: the queue of sightings waiting to be stored
  sightingsStatus: { method: 'get', path: '/sightings/status' },
  sighting: { method: 'get', path: '/sightings/{id}' },
  sightingCrop: { method: 'get', path: '/sightings/{id}/crop' },
  deleteSighting: { method: 'delete', path: '/sightings/{id}' },
  purgeSightings: { method: 'delete', path: '/sightings' },
  detectObjects: { method: 'post', path: '/objects/detect' },
  objectClasses: { method: 'get', path: '/objects/classes' },
  objectStatus: { method: 'get', path: '/objects/status' },
  storeResults: { method: 'post', path: '/results' },
  // #26 deletion
  deletedPeople: { method: 'get', path: '/deletions' },
  results: { method: 'get', path: '/results' },
  // #26 review
  reviewGroups: { method: 'get', path: '/review/groups' },
  reviewPeople: { method: 'get', path: '/review/people' },
  reviewAssign: { method: 'post', path: '/review/assign' },
  reviewDismiss: { method: 'post', path: '/review/dismiss' },
  reviewActions: { method: 'get', path: '/review/actions' },
  reviewUndo: { method: 'post', path: '/review/actions/{id}/undo' },
  reviewApart: { method: 'post', path: '/review/apart' },
  chat: { method: 'post', path: '/chat' },
  chatStatus: { method: 'get', path: '/chat/status' },
  processorStatus: { method: 'get', path: '/processor/status' },
  ppeDetect: { method: 'post', path: '/ppe/detect' },
  ppeStatus: { method: 'get', path: '/ppe/status' },
  ppeEvents: { method: 'get', path: '/ppe/events' },
  ppeDataset: { method: 'get', path: '/ppe/dataset.zip' },
  // #26 corrections
  createCorrection: { method: 'post', path: '/corrections' },
  corrections: { method: 'get', path: '/corrections' },
  deleteCorrection: { method: 'delete', path: '/corrections/{id}' },
  openapi: { method: 'get', path: '/openapi.json' },
  docs: { method: 'get', path: '/docs' },
  docsAsset: { method: 'get', path: '/docs/{file}' },
  // #26 audit
  auditLog: { method: 'get', path: '/audit' },
  updatePerson: { method: 'put', path: '/people/{label}' },
  // #36 2: a person's page, rename, cover, merge, move photos, undo; search by face
  personPage: { method: 'get', path: '/people/{label}' },
  renamePerson: { method: 'put', path: '/people/{label}/name' },
  setPersonCover: { method: 'put', path: '/people/{label}/cover' },
  mergePerson: { method: 'post', path: '/people/{label}/merge' },
  movePhotos: { method: 'post', path: '/people/{label}/photos/move' },
  undoPersonAction: { method: 'post', path: '/person-actions/{id}/undo' },
  searchFaces: { method: 'post', path: '/sightings/search' },
} as const;

export type EndpointName = keyof typeof ENDPOINTS;
