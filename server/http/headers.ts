/**
 * Cross-origin isolation on every response: with COOP `same-origin` and COEP `require-corp` the page is
 * `crossOriginIsolated`, which browsers require for SharedArrayBuffer and so for multi-threaded WASM (the
 * in-browser engines). CORP `same-origin` lets our own isolated pages load every API answer and model file,
 * and keeps other sites' pages from embedding them.
 */
import type { MiddlewareHandler } from 'hono';

export const ISOLATION_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
  'cross-origin-resource-policy': 'same-origin',
});

export function isolationHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    try {
      for (const [name, value] of Object.entries(ISOLATION_HEADERS)) c.res.headers.set(name, value);
    } catch {
      // A Response with immutable headers (e.g. from Response.redirect): copy it into one we may change.
      const res = new Response(c.res.body, c.res);
      for (const [name, value] of Object.entries(ISOLATION_HEADERS)) res.headers.set(name, value);
      c.res = res;
    }
  };
}
