/**
 * Mounts one entry of the route table (shared/api/routes.ts) on a Hono app: the path and method come from
 * the table, and so do the validators, so what is documented is what is checked. Validation keeps the API's
 * error semantics (readJson's 400/415 messages, `query parameter "x": ...`) rather than a generic validator's.
 */
import type { Context, Hono } from 'hono';
import type { z } from 'zod';
import type { ResponseOf } from '../../shared/api/client.js';
import { honoPath, type ApiRoute } from '../../shared/api/route.js';
import { apiRoutes, type ApiRoutes, type RouteName } from '../../shared/api/routes.js';
import { ApiError } from './errors.js';
import { readJson } from './request.js';

type Req<R> = R extends { request: infer Q } ? Q : {};
type JsonSchemaOf<R> = Req<R> extends { body: { content: { 'application/json': { schema: infer S extends z.ZodType } } } } ? S : never;

/** The validated input a handler gets. `body` only for routes whose only body type is JSON. */
export interface RouteInput<N extends RouteName> {
  params: Req<ApiRoutes[N]> extends { params: infer P extends z.ZodType } ? z.output<P> : Record<string, never>;
  query: Req<ApiRoutes[N]> extends { query: infer Q extends z.ZodType } ? z.output<Q> : Record<string, never>;
  body: Req<ApiRoutes[N]> extends { body: { content: infer C } }
    ? keyof C extends 'application/json'
      ? z.output<JsonSchemaOf<ApiRoutes[N]>>
      : undefined
    : undefined;
}

/** A handler answers with a Response, or with the documented 200 body (sent as JSON). */
export type RouteHandler<N extends RouteName> = (
  c: Context,
  input: RouteInput<N>,
) => Promise<Response | ResponseOf<N>> | Response | ResponseOf<N>;

export interface MountOptions {
  /** A body schema to validate with instead of the documented one (e.g. built from settings). */
  body?: z.ZodType;
}

function issueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${issue.path.length ? `"${issue.path.join('.')}"` : 'value'}: ${issue.message}`;
}

export function mountRoute<N extends RouteName>(app: Hono, name: N, handler: RouteHandler<N>, options: MountOptions = {}): void {
  const route: ApiRoute = apiRoutes[name];
  app.on(route.method.toUpperCase(), honoPath(route.path), async (c) => {
    // Metrics and logs name the route by its pattern (`/images/{label}`), never by the raw path.
    c.set('routePattern', route.path);
    const request = route.request;
    const input = { params: {}, query: {}, body: undefined } as { params: unknown; query: unknown; body: unknown };
    if (request?.params) {
      const parsed = request.params.safeParse(c.req.param());
      if (!parsed.success) throw new ApiError('bad_request', `path parameter ${issueText(parsed.error)}`);
      input.params = parsed.data;
    }
    if (request?.query) {
      const parsed = request.query.safeParse(c.req.query());
      if (!parsed.success) throw new ApiError('bad_request', `query parameter ${issueText(parsed.error)}`);
      input.query = parsed.data;
    }
    const body = request?.body;
    const types = body ? Object.keys(body.content) : [];
    // A route that takes more than JSON (multipart uploads) reads its own body.
    if (body && types.length === 1 && types[0] === 'application/json') {
      input.body = await readJson(c, options.body ?? body.content['application/json'].schema, body.required ? undefined : {});
    }
    const out = await handler(c, input as RouteInput<N>);
    return out instanceof Response ? out : c.json(out as object);
  });
}

/** `(method, path)` -> whether a route of the table with a request body answers it (`path` as under /api/...). */
export function routeReadsBody(prefix: string): (method: string, path: string) => boolean {
  const withBody = Object.values(apiRoutes as Record<string, ApiRoute>)
    .filter((route) => route.request?.body)
    .map((route) => {
      const literal = route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
      return { method: route.method.toUpperCase(), pattern: new RegExp(`^${prefix}${literal.replace(/\{[^}]+\}/g, '[^/]+')}$`) };
    });
  return (method, path) => withBody.some((r) => r.method === method && r.pattern.test(path));
}
