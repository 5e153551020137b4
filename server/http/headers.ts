/**
 * Headers on every response.
 *
 * Cross-origin isolation: with COOP `same-origin` and COEP `require-corp` the page is `crossOriginIsolated`,
 * which browsers require for SharedArrayBuffer and so for multi-threaded WASM (the in-browser engines). CORP
 * `same-origin` lets our own isolated pages load every API answer and model file, and keeps other sites' pages
 * from embedding them.
 *
 * Security: a Content-Security-Policy the web app runs under (its own scripts, WebAssembly, workers, the
 * camera) that an injected script or a framing page cannot, no MIME sniffing, no Referer (an API path can hold
 * a person's label), and API answers that carry personal data kept out of caches (apiCacheControl).
 */
import type { MiddlewareHandler } from 'hono';

export const ISOLATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
});

/**
 * What the web app and the API reference (Swagger UI) need, and nothing more:
 * - script-src 'wasm-unsafe-eval': WebAssembly.compile/instantiate (the cascade, tfjs and onnxruntime backends),
 *   with no eval of JavaScript. blob: in worker-src and script-src: Emscripten starts the threads of tfjs's WASM
 *   backend as Blob workers that importScripts() a Blob of its glue (client/src/engine/backend.ts); only a
 *   script already running here can make a blob: URL of this origin, so it admits no script from elsewhere.
 * - style-src 'unsafe-inline': Solid's and Swagger UI's style attributes; img-src data: blob: for Swagger UI's
 *   icons and the photos a person picks (object URLs); media-src blob: for a picked video.
 * - connect-src 'self': the API, the model files and the service worker's fetches; nothing else is ever called.
 * - frame-ancestors 'none' (and X-Frame-Options for older browsers): no other page may frame the app.
 */
export function contentSecurityPolicy(connect: string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self' 'wasm-unsafe-eval' blob:",
    "worker-src 'self' blob:",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self' data:",
    // With AUTH_MODE=oidc the web app also calls the issuer (discovery, token, revocation, the IdP's user admin).
    ["connect-src 'self'", ...connect].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy();

export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
});

/** For processes that answer only JSON to programs (model server, PPE detector, processor): no page, no framing. */
export const SERVICE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
});

/** API answers anyone may cache as they are: the reference page, its files and the OpenAPI document. */
const PUBLIC_API_PATH = /^\/api\/(docs(\/[^/]*)?|openapi\.json)$/;

/**
 * The Cache-Control of an API answer, by what it carries (null: keep the route's own):
 * - the reference page and its files: the route's own (public, they hold nothing personal).
 * - an answer its route revalidates (an ETag, or `no-cache`: the trained models, whose version the ETag is):
 *   `private, no-cache`. The browser keeps a copy and asks with If-None-Match every time, so a 304 saves the
 *   download while the version holds; `no-store` would keep no copy, so no If-None-Match would be sent and every
 *   download would be whole. `private`: the face model is biometric data, no shared cache may keep it.
 * - everything else (faces, labels, images, results, chat, PPE history...): `no-store`, so no browser or proxy
 *   keeps a person's photo or name after it is deleted.
 */
export function apiCacheControl(path: string, res: Response): string | null {
  if (!path.startsWith('/api/') || PUBLIC_API_PATH.test(path)) return null;
  if (res.headers.has('etag') || /\bno-cache\b/.test(res.headers.get('cache-control') ?? '')) return 'private, no-cache';
  return 'no-store';
}

/** Sets headers on c.res, copying a Response whose headers are immutable (e.g. from Response.redirect). */
function setHeaders(c: Parameters<MiddlewareHandler>[0], headers: Record<string, string>): void {
  try {
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  } catch {
    const res = new Response(c.res.body, c.res);
    for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
    c.res = res;
  }
}

/** The API server's headers: isolation, security, and the API's cache policy; `connect`: more origins the app calls. */
export function appHeaders(connect: string[] = []): MiddlewareHandler {
  const security = connect.length ? { ...SECURITY_HEADERS, 'content-security-policy': contentSecurityPolicy(connect) } : SECURITY_HEADERS;
  return async (c, next) => {
    await next();
    const headers: Record<string, string> = { ...ISOLATION_HEADERS, ...security };
    const cache = apiCacheControl(c.req.path, c.res);
    if (cache) headers['cache-control'] = cache;
    setHeaders(c, headers);
  };
}

/** The headers of a process that serves no pages (SERVICE_HEADERS). */
export function serviceHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    setHeaders(c, { ...SERVICE_HEADERS });
  };
}
