/** The REST contract: one zod schema per request and response, the route table, and the typed client. */
export * from './errors.js';
export * from './common.js';
export * from './faces.js';
export * from './verify.js';
export * from './training.js';
export * from './models.js';
export * from './objects.js';
export * from './chat.js';
export * from './results.js';
export * from './health.js';
export * from './processor.js';
export * from './ppe.js';
export * from './route.js';
export * from './routes.js';
export * from './client.js';
export * from './endpoints.js';
