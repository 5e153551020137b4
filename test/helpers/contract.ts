/**
 * Checks real answers against the contract (shared/api/routes.ts): the route a request reached, the status
 * (documented for that route, or an error status with one of its documented codes), the content type, and
 * the body against the zod schema documented for that status and type. The test server runs every answer
 * of every API test through this, so the API tests are contract tests too.
 */
import { createParser } from 'eventsource-parser';
import { errorBody } from '../../shared/api/common.js';
import { errorStatusesOf, honoPath, type ApiRoute, type MediaType } from '../../shared/api/route.js';
import { apiRoutes } from '../../shared/api/routes.js';
import { ORIGINAL_WORDS_PATHS, speaksOriginal, translateIdentifiers } from '../../server/http/original-words.js';

interface Matcher {
  name: string;
  route: ApiRoute;
  pattern: RegExp;
}

const MATCHERS: Matcher[] = Object.entries(apiRoutes).map(([name, route]) => ({
  name,
  route,
  pattern: new RegExp(`^/api${honoPath(route.path).replace(/:[A-Za-z_]+/g, '[^/]+')}$`),
}));

/** The table entry a request reaches, or null (answered by the API's catch-all 404). */
export function routeFor(method: string, pathname: string): Matcher | null {
  const m = method.toLowerCase();
  return MATCHERS.find((x) => x.route.method === m && x.pattern.test(pathname)) ?? null;
}

function mediaTypeFor(content: Record<string, MediaType>, contentType: string | null): [string, MediaType] | null {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  for (const [key, media] of Object.entries(content)) {
    if (key === type || (key.endsWith('/*') && type.startsWith(key.slice(0, -1)))) return [key, media];
  }
  return null;
}

function issues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

/** Server-sent events (`event:` + JSON `data:`) as `{ event, data }` objects, read as the web app reads them. */
export function parseSse(text: string): { event: string; data: unknown }[] {
  const events: { event: string; data: unknown }[] = [];
  const parser = createParser({ onEvent: (e) => events.push({ event: e.event ?? 'message', data: JSON.parse(e.data) }) });
  parser.feed(text);
  return events;
}

/**
 * What is wrong with one answer, in words (empty: it is as documented). `complete` false: the body was cut
 * off (a client stopped reading a stream), so only what arrived is checked.
 */
export function contractProblems(
  method: string,
  pathname: string,
  status: number,
  contentType: string | null,
  body: string,
  complete = true,
): string[] {
  if (!pathname.startsWith('/api/') || method === 'HEAD' || method === 'OPTIONS') return [];
  const where = `${method} ${pathname} -> ${status}`;
  const match = routeFor(method, pathname);
  const checkError = (codes: string[]): string[] => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [`${where}: the error body is not JSON: ${body.slice(0, 200)}`];
    }
    const result = errorBody.safeParse(parsed);
    if (!result.success) return [`${where}: not the error body: ${issues(result.error)}`];
    if (!codes.includes(result.data.error.code))
      return [`${where}: error code "${result.data.error.code}" is not documented (documented: ${codes.join(', ')})`];
    return [];
  };
  if (!match) {
    if (status === 404) return checkError(['not_found']);
    // Refused before routing, whatever the path or method (server/http/security.ts; the document's description
    // says so); a documented route lists these among its own errors.
    if (status === 421) return checkError(['host_not_allowed']);
    // A body that is neither JSON nor multipart on a write, refused before routing too (FUZZ_SEED=991720522 found
    // it on PUT /api/people/ with an empty label: 415, which the check called undocumented).
    if (status === 415) return checkError(['unsupported_media_type']);
    // AUTH_MODE=oidc: a path the route table does not name needs a valid token with a role first (server/http/auth.ts).
    if (status === 403) return checkError(['forbidden_origin', 'insufficient_role']);
    if (status === 401) return checkError(['missing_token', 'invalid_token']);
    if (status === 503) return checkError(['auth_unavailable']);
    // A documented path asked with another method: 405 `method_not_allowed` (server/http/methods.ts).
    if (status === 405 && MATCHERS.some((x) => x.pattern.test(pathname))) return checkError(['method_not_allowed']);
    return [`${where}: no documented route answers this request`];
  }

  const documented = match.route.responses[status];
  if (!documented) {
    const codes = errorStatusesOf(match.route).get(status);
    if (!codes) return [`${where}: status ${status} is not documented for ${match.name}`];
    return checkError(codes);
  }
  if (!documented.content) return body.length === 0 ? [] : [`${where}: documented without a body, got ${body.length} bytes`];
  const media = mediaTypeFor(documented.content, contentType);
  if (!media)
    return [`${where}: content type ${contentType} is not documented (documented: ${Object.keys(documented.content).join(', ')})`];
  const [type, { schema }] = media;
  if (type === 'application/json' && !(schema.meta()?.format === 'binary')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [`${where}: the body is not JSON`];
    }
    const result = schema.safeParse(parsed);
    return result.success ? [] : [`${where}: the body does not match ${match.name}'s schema: ${issues(result.error)}`];
  }
  if (type === 'text/event-stream') {
    const text = complete ? body : body.slice(0, body.lastIndexOf('\n\n') + 2);
    const problems: string[] = [];
    for (const event of parseSse(text)) {
      const result = schema.safeParse(event);
      if (!result.success) problems.push(`${where}: event ${event.event} does not match: ${issues(result.error)}`);
    }
    return problems;
  }
  return [];
}

/**
 * Wraps a fetch handler so every answer is checked; what is wrong is collected in `problems`. `settled()`
 * waits for the checks of answers still streaming (up to a bound: a stream nobody reads to its end).
 */
export function checkedFetch<A extends unknown[]>(handler: (req: Request, ...rest: A) => Response | Promise<Response>) {
  const problems: string[] = [];
  const pending = new Set<Promise<void>>();
  const fetch = async (req: Request, ...rest: A): Promise<Response> => {
    const res = await handler(req, ...rest);
    const { pathname } = new URL(req.url);
    if (!pathname.startsWith('/api/')) return res;
    const [mine, theirs] = res.body ? res.body.tee() : [null, null];
    const check = (async () => {
      let text = '';
      let complete = true;
      if (mine) {
        const reader = mine.pipeThrough(new TextDecoderStream()).getReader();
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            text += value;
          }
        } catch {
          complete = false;
        }
      }
      // The original's frontend gets its own identifiers (server/http/original-words.ts): checked as Lookout's words.
      if (complete && text && ORIGINAL_WORDS_PATHS.has(pathname) && speaksOriginal(req.headers.get('accept'))) {
        try {
          text = JSON.stringify(translateIdentifiers(JSON.parse(text), 'lookout'));
        } catch {
          // not JSON: checked as it is
        }
      }
      problems.push(...contractProblems(req.method, pathname, res.status, res.headers.get('content-type'), text, complete));
    })();
    pending.add(check);
    void check.finally(() => pending.delete(check));
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const settled = async (ms = 3000) => {
    await Promise.race([Promise.all([...pending]), new Promise((r) => setTimeout(r, ms))]);
  };
  return { fetch, problems, settled };
}
