/**
 * A typed fetch client for the Lookout REST API, for the web app and for integrators (browser or Node 20+).
 * Arguments and results are typed from the route table, so a changed response schema breaks the caller's
 * build. Every refused request throws a LookoutError carrying the API's error code and message.
 *
 *   const lookout = createLookoutClient({ baseUrl: 'http://kiosk.local:8080' });
 *   const { faces } = await lookout.call('recognize', { body: { image: dataUrl } });
 */
import type { z } from 'zod';
import type { ErrorBody } from './common.js';
import type { ErrorCode } from './errors.js';
import { ENDPOINTS } from './endpoints.js';
// Types only: the route table's zod schemas stay out of the client's run time (and of a browser bundle).
import type { ApiRoutes, RouteName } from './routes.js';

type SuccessStatus = 200 | 201 | 202 | 204;
type Out<M> = M extends { schema: infer S extends z.ZodType } ? z.output<S> : never;
type JsonOf<C> = C extends { 'application/json': infer M } ? Out<M> : never;
type Responses<N extends RouteName> = ApiRoutes[N]['responses'];

/** The JSON body of a route's successful answer. */
export type ResponseOf<N extends RouteName> = {
  [S in keyof Responses<N> & SuccessStatus]: Responses<N>[S] extends { content: infer C } ? JsonOf<C> : never;
}[keyof Responses<N> & SuccessStatus];

type Req<N extends RouteName> = ApiRoutes[N] extends { request: infer R } ? R : {};
type ParamsIn<R> = R extends { params: infer P extends z.ZodType } ? { params: z.input<P> } : {};
type QueryIn<R> = R extends { query: infer Q extends z.ZodType } ? { query?: z.input<Q> } : {};
type BodyValue<C> =
  | (C extends { 'application/json': { schema: infer S extends z.ZodType } } ? z.input<S> : never)
  | (C extends { 'multipart/form-data': unknown } ? FormData : never);
type BodyIn<R> = R extends { body: { required: infer Req; content: infer C } }
  ? Req extends true
    ? { body: BodyValue<C> }
    : { body?: BodyValue<C> }
  : {};

/** What a route takes: path parameters, query and body, each only where the route has them. */
export type RequestOf<N extends RouteName> = ParamsIn<Req<N>> & QueryIn<Req<N>> & BodyIn<Req<N>>;

type Args<N extends RouteName> =
  {} extends RequestOf<N> ? [input?: RequestOf<N>, init?: RequestInit] : [input: RequestOf<N>, init?: RequestInit];

/** A refused or failed request. `status` 0 and code `network`: the server could not be reached. */
export class LookoutError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The API's error code; `network` when unreachable, `http_error` when the answer was not the API's error body. */
    readonly code: ErrorCode | 'network' | 'http_error',
    /** The API's error body, when the answer was one. */
    readonly body: ErrorBody | null,
    readonly statusText = '',
  ) {
    super(message);
    this.name = 'LookoutError';
  }
}

export interface LookoutClientOptions {
  /** Where the server is, e.g. `http://127.0.0.1:8080`; empty (the default) for the page's own origin. */
  baseUrl?: string;
  /** A fetch to use instead of the global one (tests, auth headers, retries). */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
}

function isErrorBody(v: unknown): v is ErrorBody {
  const e = (v as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  return typeof e?.code === 'string' && typeof e.message === 'string';
}

export function createLookoutClient(options: LookoutClientOptions = {}) {
  const base = (options.baseUrl ?? '').replace(/\/+$/, '');
  const doFetch = options.fetch ?? ((input: string, init?: RequestInit) => fetch(input, init));

  /** The URL of a route, e.g. for an `<img src>`. */
  function url<N extends RouteName>(name: N, ...[input]: Args<N>): string {
    const route = ENDPOINTS[name];
    const { params, query } = (input ?? {}) as { params?: Record<string, string>; query?: Record<string, unknown> };
    const path = route.path.replace(/\{([^}]+)\}/g, (_, key: string) => encodeURIComponent(String(params?.[key] ?? '')));
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) if (value !== undefined) search.set(key, String(value));
    const qs = search.toString();
    return `${base}/api${path}${qs ? `?${qs}` : ''}`;
  }

  /** Sends a request; resolves with the Response when it is 2xx or 304, else throws a LookoutError. */
  async function send<N extends RouteName>(name: N, ...args: Args<N>): Promise<Response> {
    const [input, init] = args;
    const route = ENDPOINTS[name];
    const body = (input as { body?: unknown } | undefined)?.body;
    const request: RequestInit = { ...init, method: route.method.toUpperCase() };
    if (body instanceof FormData) request.body = body;
    // Every POST and PUT of the API takes a JSON body; one left out is sent as `{}`.
    else if (body !== undefined || route.method === 'post' || route.method === 'put') {
      request.headers = { 'content-type': 'application/json', ...(init?.headers as Record<string, string> | undefined) };
      request.body = JSON.stringify(body ?? {});
    }
    let res: Response;
    try {
      res = await doFetch(url(name, ...args), request);
    } catch (err) {
      if ((err as Error)?.name === 'AbortError') throw err;
      throw new LookoutError('the server could not be reached', 0, 'network', null);
    }
    if (res.ok || res.status === 304) return res;
    let parsed: unknown = null;
    try {
      parsed = await res.json();
    } catch {
      // Not JSON (a proxy's error page, say): no API error body.
    }
    if (isErrorBody(parsed)) throw new LookoutError(parsed.error.message, res.status, parsed.error.code, parsed, res.statusText);
    throw new LookoutError(`the server answered ${res.status} ${res.statusText}`.trim(), res.status, 'http_error', null, res.statusText);
  }

  /** Sends a request and returns its JSON answer, typed from the route table. */
  async function call<N extends RouteName>(name: N, ...args: Args<N>): Promise<ResponseOf<N>> {
    return (await send(name, ...args)).json() as Promise<ResponseOf<N>>;
  }

  return { url, send, call };
}

export type LookoutClient = ReturnType<typeof createLookoutClient>;
