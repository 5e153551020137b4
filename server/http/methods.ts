/**
 * A path served under other methods answers 405 with `Allow` (GET /api/train: `Allow: POST`), not the 404 of a
 * path that does not exist, so a client learns what it did wrong. Hono's methodNotAllowed reads the methods
 * from the app's routes once they are all mounted.
 */
import type { Hono, MiddlewareHandler } from 'hono';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { errorBody } from './errors.js';

/** For `app.use('*', ...)` on the app whose routes are checked (the API under /api). */
export function wrongMethod(app: Hono): MiddlewareHandler {
  return methodNotAllowed({
    app,
    onMethodNotAllowed: (c, methods) =>
      c.json(
        errorBody(
          'method_not_allowed',
          `${c.req.method} is not served at ${c.req.path}; it answers ${methods.join(', ')}`,
          undefined,
          c.get('requestId'),
        ),
        405,
        { allow: methods.join(', ') },
      ),
  });
}

/** The web app's pages and files are read-only: any other method than GET or HEAD is a 405. */
export function readOnlyPages(): MiddlewareHandler {
  return async (c) =>
    c.json(
      errorBody(
        'method_not_allowed',
        `${c.req.method} is not served at ${c.req.path}; it answers GET, HEAD`,
        undefined,
        c.get('requestId'),
      ),
      405,
      { allow: 'GET, HEAD' },
    );
}
