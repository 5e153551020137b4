/** The REST contract: one zod schema per request and response, the route table, and the typed client. */
export * from './errors.js';
export * from './common.js';
export * from './faces.js';
// #26 enrollment
export * from './enrollment.js';
export * from './verify.js';
export * from './training.js';
export * from './models.js';
// #27 compact browser models
export * from './compact-models.js';
export * from './objects.js';
export * from './chat.js';
export * from './analyze.js';
export * from './results.js';
// #26 deletion
export * from './deletions.js';
// #26 corrections
export * from './corrections.js';
// #26 sightings
export * from './sightings.js';
// #26 review
export * from './review.js';
export * from './health.js';
export * from './processor.js';
export * from './ppe.js';
export * from './route.js';
export * from './routes.js';
export * from './client.js';
export * from './endpoints.js';
// #26 audit
export * from './audit.js';
