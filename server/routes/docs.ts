/**
 * GET /api/openapi.json (the OpenAPI 3.1 document) and GET /api/docs, the interactive reference: Swagger UI from
 * the swagger-ui-dist package, served by this server so it works on an offline kiosk. The initializer is a
 * served file, not an inline script, so the page keeps working under a CSP without 'unsafe-inline'.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Hono } from 'hono';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { openApiDocument } from '../http/openapi.js';
import { mountRoute } from '../http/route.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lookout API reference</title>
<link rel="stylesheet" href="/api/docs/swagger-ui.css">
<link rel="icon" type="image/png" href="/api/docs/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script src="/api/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to validator.swagger.io. The operation ids
// shown are the names the typed client (shared/api/client.ts) calls them by.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  displayOperationId: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

/** The files of swagger-ui-dist the page uses, with their types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

function swaggerUiDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

export function docsRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  let document: string | null = null;
  const files = new Map<string, Uint8Array<ArrayBuffer>>();

  mountRoute(app, 'openapi', (c) => {
    document ??= JSON.stringify(openApiDocument(ctx.version));
    return c.body(document, 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' });
  });

  mountRoute(app, 'docs', (c) => c.html(PAGE, 200, { 'cache-control': 'no-cache' }));

  mountRoute(app, 'docsAsset', (c, { params }) => {
    if (params.file === 'init.js')
      return c.body(INIT, 200, { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache' });
    // Own keys only: `toString` or `constructor` would otherwise name Object.prototype's and reach the disk (a 500).
    const type = Object.hasOwn(ASSETS, params.file) ? ASSETS[params.file] : undefined;
    if (!type) throw new ApiError('not_found', `no file ${params.file} in the API reference`);
    let bytes = files.get(params.file);
    if (!bytes) {
      bytes = new Uint8Array(fs.readFileSync(path.join(swaggerUiDir(), params.file)));
      files.set(params.file, bytes);
    }
    return c.body(bytes, 200, { 'content-type': type, 'cache-control': 'public, max-age=86400' });
  });

  return app;
}
