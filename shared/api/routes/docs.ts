/**
 * Part of the route table (routes.ts, which spreads every part in order).
 * The API reference: the OpenAPI document and its pages.
 */
import { z } from 'zod';
import { binaryBody } from '../common.js';
import { ENDPOINTS, type EndpointName } from '../endpoints.js';
import { docsFile } from './content.js';
import { defineRoute, type ApiRoute } from '../route.js';

export const docsRoutes = {
  openapi: defineRoute({
    ...ENDPOINTS.openapi,
    summary: 'This API description (OpenAPI 3.1)',
    tags: ['Docs'],
    responses: {
      200: { description: 'The OpenAPI document.', content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } } },
    },
    errors: [],
  }),
  docs: defineRoute({
    ...ENDPOINTS.docs,
    summary: 'The interactive API reference (Swagger UI, served from this server: works offline)',
    tags: ['Docs'],
    responses: { 200: { description: 'The page.', content: { 'text/html': { schema: docsFile } } } },
    errors: [],
  }),
  docsAsset: defineRoute({
    ...ENDPOINTS.docsAsset,
    summary: 'A file of the API reference page (script, style sheet, icon)',
    tags: ['Docs'],
    request: { params: z.object({ file: z.string().meta({ example: 'swagger-ui.css' }) }) },
    responses: {
      200: {
        description: 'The file.',
        content: {
          'text/javascript': { schema: docsFile },
          'text/css': { schema: docsFile },
          'image/png': { schema: binaryBody },
        },
      },
    },
    errors: ['not_found'],
  }),
} satisfies Partial<Record<EndpointName, ApiRoute>>;
