/**
 * Keeps other web pages from driving a Lookout process through the browser of someone who can reach it. One
 * middleware for every HTTP process a browser could reach (the API server, the processor's status server, the
 * model server, the PPE detector):
 *
 * - DNS rebinding: a page at http://evil.example:8080 whose name later resolves to 127.0.0.1 is same-origin
 *   with itself, so the browser lets it read and delete through our answers; only the Host header gives it
 *   away. The Host must name one of the allowed hosts, else 421. An IP address is always accepted: a rebinding
 *   needs a name the attacker controls, and a page loaded from an IP address is that address's own origin
 *   (kubelet probes and Prometheus scrapes send the pod's IP; Vite and webpack-dev-server decide the same).
 * - Cross-site requests (CSRF and cross-site reads): browsers say where a request comes from, with Origin on
 *   every request but same-origin GETs and with Sec-Fetch-Site on all of them. A request from an origin that is
 *   neither the server's own nor listed is refused (403), and so is a cross-site one without an Origin (an
 *   <img> or <script> load), top-level navigations aside (a link someone follows to the app is fine).
 * - State-changing requests (API only): the body must be JSON, which a page of another origin cannot send
 *   without a CORS preflight that is never granted to it, or multipart, which a cross-site form can send, so
 *   for uploads it is the origin rule above that protects them; any other type (text/plain, a form) is 415.
 *
 * Programs (curl, the processor, the identity provider, the Keycloak extension) send neither Origin nor
 * Sec-Fetch-*, and pass the browser rules; only their Host is checked.
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import { z } from 'zod';
import type { ErrorCode } from '../../shared/api/errors.js';
import { errorBody } from './errors.js';
import { serviceHeaders } from './headers.js';

/** ALLOWED_HOSTS's default; the configured HOST is added to whatever list is in use. */
export const DEFAULT_ALLOWED_HOSTS = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Listen addresses meaning "every interface": never a name a browser uses. */
const WILDCARD_ADDRESSES = new Set(['0.0.0.0', '::', '[::]']);

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
/** A host name (letters, digits, `-`, `_`, dots; `*.` first: any name under it), an IPv4 or a bracketed IPv6 address. */
const HOST_ENTRY = /^(\*\.)?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$|^\[[0-9a-f:.]+\]$/;

/** `Example.COM.` -> `example.com`, `::1` -> `[::1]`: hosts as the URL parser writes them (`a:80` stays, and is refused). */
function normaliseHostName(host: string): string {
  const h = host.trim().toLowerCase().replace(/\.$/, '');
  return /:.*:/.test(h) && !h.startsWith('[') ? `[${h}]` : h;
}

function isHostEntry(host: string): boolean {
  if (!HOST_ENTRY.test(host)) return false;
  if (!host.startsWith('[')) return true;
  try {
    return new URL(`http://${host}`).hostname === host;
  } catch {
    return false;
  }
}

/**
 * A comma-separated list of host names (ALLOWED_HOSTS), normalised; throws naming the first bad entry. Names
 * only, no port or scheme: the check is on the name, whatever the port.
 */
export function parseHostList(text: string): string[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    const host = normaliseHostName(entry);
    if (!isHostEntry(host)) throw new Error(`"${entry}" is not a host name (a name, *.domain or an IP address, no scheme or port)`);
    return host;
  });
}

/** A comma-separated list of origins (ALLOWED_ORIGINS), as `scheme://host[:port]`; throws naming the first bad one. */
export function parseOriginList(text: string): string[] {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return entries.map((entry) => {
    let url: URL;
    try {
      url = new URL(entry);
    } catch {
      throw new Error(`"${entry}" is not an origin such as https://kiosk.example.org`);
    }
    // Scheme, host and port only: a path, a query or credentials mean the entry is not what the operator thinks.
    if (!/^https?:$/.test(url.protocol) || url.pathname !== '/' || url.search || url.hash || url.username || url.password)
      throw new Error(`"${entry}" is not an origin such as https://kiosk.example.org (scheme, host and port only)`);
    return url.origin;
  });
}

/** ALLOWED_HOSTS in the model server's and the PPE detector's own settings (unset: the default). */
export const allowedHostsVariable = z
  .string()
  .optional()
  .transform((text, ctx) => {
    if (text === undefined) return undefined;
    try {
      return parseHostList(text);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `ALLOWED_HOSTS: ${err instanceof Error ? err.message : String(err)}` });
      return z.NEVER;
    }
  });

/** The allowed hosts in use: the list (or the default) plus the address the server listens on, when it is one a browser could use. */
export function allowedHostsFor(list: readonly string[] | undefined, listenHost: string | undefined): string[] {
  const hosts = new Set(list?.length ? list.map(normaliseHostName) : DEFAULT_ALLOWED_HOSTS);
  if (listenHost) {
    const host = normaliseHostName(listenHost);
    if (!WILDCARD_ADDRESSES.has(host) && isHostEntry(host)) hosts.add(host);
  }
  return [...hosts];
}

export interface WebSecurityOptions {
  /** Host names a request may be addressed to (allowedHostsFor); IP addresses are always accepted. */
  allowedHosts: readonly string[];
  /** Origins of other web pages that may call this server (ALLOWED_ORIGINS); they also get CORS answers. */
  allowedOrigins?: readonly string[];
  /** The port the server listens on: `http(s)://<allowed host>:<port>` is its own origin. */
  port?: number;
  /** State-changing requests must carry JSON or multipart (the API; the model servers take raw bodies). */
  requireBodyType?: boolean;
  /** The process's own error answer (default: the API's error body). */
  refuse?: (c: Context, status: 403 | 415 | 421, code: ErrorCode, message: string) => Response;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** JSON (`application/json`, `application/*+json`) or multipart/form-data. */
const BODY_TYPES = /^\s*(application\/([a-z0-9.!#$&^_-]+\+)?json|multipart\/form-data)\s*(;|$)/i;
/** What a Host header may hold: a name or address and a port, nothing a URL parser would read otherwise. */
const HOST_HEADER = /^[A-Za-z0-9.\-_[\]:]+$/;

function defaultRefuse(c: Context, status: 403 | 415 | 421, code: ErrorCode, message: string): Response {
  return c.json(errorBody(code, message, undefined, c.get('requestId')), status);
}

/** The Host header (or, without one, the URL's authority) as the URL parser reads it; null when it is not a host. */
function requestAuthority(c: Context): URL | null {
  const header = c.req.header('host');
  const raw = header ?? new URL(c.req.url).host;
  if (!HOST_HEADER.test(raw)) return null;
  try {
    return new URL(`http://${raw}`);
  } catch {
    return null;
  }
}

function isIpAddress(hostname: string): boolean {
  return IPV4.test(hostname) || hostname.startsWith('[');
}

function effectivePort(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/**
 * The 421's message: the refused name as ALLOWED_HOSTS takes it (no port) and the setting to change, so whoever
 * deployed the service knows what to do without reading the code.
 */
function hostRefusal(header: string, authority: URL | null): string {
  if (!authority) return `the Host header "${header.slice(0, 100)}" is not a host name; send the name this server is reached by`;
  const name = authority.hostname.slice(0, 100);
  return `this server does not answer for the host "${name}"; if that is its name, add "${name}" to the ALLOWED_HOSTS setting`;
}

/** The 403's message for a page whose origin is not accepted: the origin as ALLOWED_ORIGINS takes it, and the setting. */
function originRefusal(origin: string): string {
  let listed: string | null = null;
  try {
    const url = new URL(origin);
    if (url.protocol === 'http:' || url.protocol === 'https:') listed = url.origin;
  } catch {
    // `null` (a sandboxed frame, a file: page) or garbage: no origin to list.
  }
  if (!listed) return `requests from a web page with the origin "${origin.slice(0, 100)}" are not accepted`;
  return `requests from the web page at ${listed.slice(0, 100)} are not accepted; to allow them, add "${listed.slice(0, 100)}" to the ALLOWED_ORIGINS setting`;
}

export function webSecurity(options: WebSecurityOptions): MiddlewareHandler {
  const hosts = new Set(options.allowedHosts.map(normaliseHostName));
  const domains = [...hosts].filter((h) => h.startsWith('*.')).map((h) => h.slice(1));
  const hostAllowed = (hostname: string): boolean => {
    const name = normaliseHostName(hostname);
    return hosts.has(name) || domains.some((d) => name.endsWith(d));
  };
  const listed = new Set(options.allowedOrigins ?? []);
  const refuse = options.refuse ?? defaultRefuse;
  // CORS answers (preflights included) only for the listed origins of other pages; the app needs none.
  const corsForListed = listed.size
    ? cors({
        origin: (origin) => (listed.has(origin) ? origin : null),
        allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
        // `authorization`: bearer tokens under AUTH_MODE=oidc; `www-authenticate` says why a token was refused.
        allowHeaders: ['content-type', 'x-request-id', 'if-none-match', 'authorization'],
        exposeHeaders: ['x-request-id', 'etag', 'x-model-version', 'www-authenticate'],
        maxAge: 600,
      })
    : null;

  /** The server's own origin: the one the request is addressed to, or an allowed host on the server's port. */
  const isOwnOrigin = (origin: URL, authority: URL): boolean =>
    origin.host === authority.host ||
    (options.port !== undefined && hostAllowed(origin.hostname) && effectivePort(origin) === options.port);

  const originAllowed = (value: string, authority: URL): boolean => {
    let origin: URL;
    try {
      origin = new URL(value);
    } catch {
      return false; // `null` (a sandboxed frame, a file: page) or garbage
    }
    if (origin.protocol !== 'http:' && origin.protocol !== 'https:') return false;
    return isOwnOrigin(origin, authority) || listed.has(origin.origin);
  };

  return async (c, next) => {
    const authority = requestAuthority(c);
    if (!authority || !(isIpAddress(authority.hostname) || hostAllowed(authority.hostname))) {
      // 421 Misdirected Request (RFC 9110 15.5.20): this server will not answer for the name the request was
      // addressed to. It says exactly that, where a 400 would blame the request's syntax.
      return refuse(c, 421, 'host_not_allowed', hostRefusal(c.req.header('host') ?? '', authority));
    }

    const method = c.req.method;
    const origin = c.req.header('origin');
    const site = c.req.header('sec-fetch-site');
    if (origin !== undefined) {
      if (!originAllowed(origin, authority)) return refuse(c, 403, 'forbidden_origin', originRefusal(origin));
    } else if (site === 'cross-site' || site === 'same-site') {
      // No Origin: a subresource load (<img>, <script>) or a navigation. A followed link is fine, the rest is not.
      const navigation = c.req.header('sec-fetch-mode') === 'navigate' && c.req.header('sec-fetch-dest') === 'document';
      if (!(navigation && SAFE_METHODS.has(method)))
        return refuse(c, 403, 'forbidden_origin', `a ${site} request from another web page without an Origin is not accepted`);
    }

    if (options.requireBodyType && !SAFE_METHODS.has(method)) {
      const type = c.req.header('content-type');
      const length = c.req.header('content-length');
      const hasBody = (length !== undefined && length.trim() !== '0') || c.req.header('transfer-encoding') !== undefined;
      if (type ? !BODY_TYPES.test(type) : hasBody)
        return refuse(
          c,
          415,
          'unsupported_media_type',
          `send the body as application/json (or multipart/form-data for uploads), not ${type ? type.split(';')[0].trim().slice(0, 100) : 'without a Content-Type'}`,
        );
    }

    if (corsForListed && origin !== undefined && listed.has(origin)) return corsForListed(c, next);
    await next();
  };
}

/** A KServe V2 server's refusal: the V2 error body `{ "error": "..." }` (the model server and the PPE detector). */
export function refuseAsV2(c: Context, status: 403 | 415 | 421, _code: ErrorCode, message: string): Response {
  return c.json({ error: message }, status);
}

/**
 * The protection of a service whose clients are programs, never pages (the model server, the PPE detector, the
 * processor's status server): its headers, then the Host and Origin checks, before every route of `app`.
 */
export function protectService(app: Hono, options: WebSecurityOptions): void {
  app.use('*', serviceHeaders());
  app.use('*', webSecurity(options));
}
