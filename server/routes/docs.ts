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
<link rel="stylesheet" href="/api/docs/lookout.css">
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
// shown are the names the typed client (shared/api/client.ts) calls them by. No deep links: Swagger UI puts each
// as a link inside the operation's expand button, a control in a control that screen readers cannot reach (axe).
const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: false,
  // Its highlighting colours (red numbers on dark grey) are below AA contrast; plain text reads the same.
  syntaxHighlight: { activated: false },
  displayOperationId: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
// Swagger UI's list of a response's examples has a caption that is not its label: name it for screen readers.
// A long example scrolls inside its box: make the box focusable so a keyboard can scroll it too (axe
// scrollable-region-focusable).
new MutationObserver(() => {
  for (const select of document.querySelectorAll('select.examples-select-element:not([aria-label])')) {
    select.setAttribute('aria-label', 'Examples');
  }
  for (const example of document.querySelectorAll('.highlight-code pre:not([tabindex])')) {
    example.setAttribute('tabindex', '0');
  }
}).observe(document.getElementById('swagger-ui'), { childList: true, subtree: true });
`;

// Swagger UI's own colours and link sizes fall short of WCAG AA (axe, e2e/accessibility.spec.ts): darker method
// badges, labels and links (4.5:1 or more against their backgrounds) and operation links at least 24 px tall.
const CSS = `.swagger-ui .info .title small pre.version { background: #555b66; }
.swagger-ui .info .title small.version-stamp { background: #3d6b00; }
.swagger-ui .info .url, .swagger-ui .info a { color: #1f5fa8; }
.swagger-ui .btn.authorize { color: #137b4a; border-color: #137b4a; }
.swagger-ui .btn.authorize span { color: #137b4a; }
.swagger-ui .btn.authorize svg { fill: #137b4a; }
.swagger-ui .opblock.opblock-post .opblock-summary-method { background: #137b4a; }
.swagger-ui .opblock.opblock-get .opblock-summary-method { background: #1a64b0; }
.swagger-ui .opblock.opblock-put .opblock-summary-method { background: #a35600; }
.swagger-ui .opblock.opblock-delete .opblock-summary-method { background: #c31d1d; }
.swagger-ui .opblock.opblock-patch .opblock-summary-method { background: #0b7a66; }
.swagger-ui .opblock.opblock-head .opblock-summary-method { background: #7a0fd6; }
.swagger-ui .opblock.opblock-options .opblock-summary-method { background: #0d5aa7; }
.swagger-ui .json-schema-2020-12-expand-deep-button { color: #595959; }
.swagger-ui .opblock-summary-path a { display: inline-block; min-height: 24px; line-height: 24px; }
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
    if (params.file === 'lookout.css') return c.body(CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache' });
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
