/**
 * The shape of one entry of the route table (routes.ts): method, path, request schemas and the answers per
 * status. Plain data over zod schemas: the server mounts and documents it (OpenAPI), the typed client
 * (client.ts) derives its argument and result types from it, the API tests check real answers against it.
 */
import type { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from './errors.js';
import type { Access } from './roles.js';

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

export interface MediaType {
  schema: z.ZodType;
  example?: unknown;
}

export interface ApiResponse {
  description: string;
  /** Response headers worth documenting (zod object: one string field per header, lower-case). */
  headers?: z.ZodObject;
  /** By media type; absent for a body-less answer (304). */
  content?: Record<string, MediaType>;
}

export interface ApiRoute {
  method: HttpMethod;
  /** OpenAPI style, relative to the table's root (/api for routes.ts, / for the processor's): `/images/{label}`. */
  path: string;
  summary: string;
  description?: string;
  tags: readonly string[];
  request?: {
    params?: z.ZodObject;
    query?: z.ZodObject;
    body?: {
      /** false: an empty body is read as `{}`. */
      required: boolean;
      description?: string;
      content: Record<string, MediaType>;
    };
  };
  /** Every non-error answer (2xx, 304, and 503 of /ready, which carries the ready body). */
  responses: Record<number, ApiResponse>;
  /** Error codes this route answers with beyond those every route or every body can give (see errorCodesOf). */
  errors: readonly ErrorCode[];
  /** Who may call it under AUTH_MODE=oidc (roles.ts; the API's table sets it for every entry); absent: open. */
  access?: Access;
}

/** Keeps the literal types of an entry, for the typed client. */
export function defineRoute<const R extends ApiRoute>(route: R): R {
  return route;
}

/**
 * The error codes a route can answer: its own, those of reading its body, those every request can get from the
 * web-security checks (server/http/security.ts: a Host not allowed, a browser request from another origin, a
 * state-changing request whose type a cross-site form could send), the shared state out of reach (#37), and
 * the internal error.
 */
export function errorCodesOf(route: ApiRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors);
  codes.add('host_not_allowed');
  codes.add('forbidden_origin');
  if (route.method !== 'get') codes.add('unsupported_media_type');
  // #37: the state shared by replicas (PostgreSQL) away: a change is not made, a read that needs it not answered.
  // Not on a route whose 503 is an answer of its own (a readiness probe says "not ready" with its body instead).
  if (!route.responses[503]) codes.add('storage_unavailable');
  const body = route.request?.body;
  if (body) {
    codes.add('payload_too_large');
    codes.add('unsupported_media_type');
    codes.add('bad_request');
    if (body.content['application/json']) codes.add('invalid_json');
    if (body.required) codes.add('missing_field');
  }
  if (route.request?.query) codes.add('bad_request');
  // Under AUTH_MODE=oidc (server/http/auth.ts): no token, a token that does not verify, a role missing, or the
  // issuer's keys out of reach (denied, never let through). Documented whatever the mode, as the contract.
  if (route.access && route.access !== 'public') {
    for (const code of ['missing_token', 'invalid_token', 'insufficient_role', 'auth_unavailable'] as const) codes.add(code);
  }
  codes.add('internal_error');
  return [...codes];
}

/** The error codes of a route grouped by the status they are answered with. */
export function errorStatusesOf(route: ApiRoute): Map<number, ErrorCode[]> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route)) {
    const status = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

/** `/images/{label}` -> `/images/:label` (Hono's syntax). */
export function honoPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, ':$1');
}
