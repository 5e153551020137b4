/**
 * The original service's identifiers for its own frontend (issue #35). Its Angular pages compare what they read
 * with the original's words: "OpenVINO (Remote)" only for `detection_method === 'openvino'` (anything else is
 * "OpenCV (Local)"), and the Model Config radios are preselected by `type` equal to `detection_method` / `ai_model`.
 * Lookout answers `local`/`remote` and `lbph`/`embedding`, so with remote detection that frontend said "OpenCV"
 * everywhere. It cannot be changed, and it says who it is: Angular's HttpClient sends `Accept: application/json,
 * text/plain, *\/*` on every request, which Lookout's own clients (its web app, the processor, the identity
 * provider, curl, fetch) do not. Requests that send it get, on the endpoints that frontend reads, the original's
 * words in the fields it reads (`opencv`/`openvino`, `dlib`); every other request gets Lookout's, as documented.
 * COMPAT_IDENTIFIERS=off answers Lookout's words to everyone (a Lookout client that sends that Accept, e.g. axios).
 */
import type { MiddlewareHandler } from 'hono';

/** What Angular's HttpClient (and axios) send when the caller sets no Accept. */
export const ANGULAR_ACCEPT = 'application/json, text/plain, */*';

/** The request is from the original's frontend: it sends Angular's default Accept, and nothing else does here. */
export function speaksOriginal(accept: string | null | undefined): boolean {
  if (!accept) return false;
  return (
    accept
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .join(',') === 'application/json,text/plain,*/*'
  );
}

/** The endpoints the original's frontend reads these identifiers from (GET or the method it calls). */
export const ORIGINAL_WORDS_PATHS: ReadonlySet<string> = new Set([
  '/api/ready',
  '/api/models/config',
  '/api/models/available',
  '/api/models/detection',
  '/api/recognize',
  '/api/train',
  '/api/analyze',
  '/api/chat',
]);

const DETECTION: Record<string, string> = { local: 'opencv', remote: 'openvino' };
const MODEL: Record<string, string> = { lbph: 'lbph', embedding: 'dlib' };
const invert = (map: Record<string, string>) => Object.fromEntries(Object.entries(map).map(([k, v]) => [v, k]));
const WORDS = {
  original: { detection: DETECTION, model: MODEL },
  lookout: { detection: invert(DETECTION), model: invert(MODEL) },
};

/**
 * The body with the identifiers the original's frontend reads in the other vocabulary: `detection_method` (top
 * level, of each face, of the analysis), `ai_model`, `model_info.type`, `type` of each `detection_methods[]` and
 * `models[]` entry. Lookout's own fields beside them (`recognition_model`, `name`, `trained_detection_method`) stay.
 */
export function translateIdentifiers(body: unknown, to: 'original' | 'lookout'): unknown {
  const { detection, model } = WORDS[to];
  const swap = (value: unknown, map: Record<string, string>) => (typeof value === 'string' && value in map ? map[value] : value);
  const walk = (node: unknown, key: string | null): unknown => {
    if (Array.isArray(node)) {
      if (key === 'detection_methods') return node.map((m) => (isObject(m) ? { ...walkObject(m), type: swap(m.type, detection) } : m));
      if (key === 'models') return node.map((m) => (isObject(m) ? { ...walkObject(m), type: swap(m.type, model) } : m));
      return node.map((item) => walk(item, null));
    }
    if (!isObject(node)) return node;
    const out = walkObject(node);
    if (key === 'model_info') out.type = swap(node.type, model);
    return out;
  };
  const walkObject = (node: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      out[k] = k === 'detection_method' ? swap(v, detection) : k === 'ai_model' ? swap(v, model) : walk(v, k);
    }
    return out;
  };
  return walk(body, null);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Rewrites the JSON answers of ORIGINAL_WORDS_PATHS for the original's frontend (see above); `enabled`: COMPAT_IDENTIFIERS. */
export function originalWords(enabled: boolean): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!enabled || !ORIGINAL_WORDS_PATHS.has(c.req.path)) return;
    // The same URL answers two vocabularies: caches must tell them apart.
    c.res.headers.append('vary', 'Accept');
    if (!speaksOriginal(c.req.header('accept')) || !/^application\/json\b/i.test(c.res.headers.get('content-type') ?? '')) return;
    const { status } = c.res;
    const headers = new Headers(c.res.headers);
    const body = translateIdentifiers(await c.res.json(), 'original');
    headers.delete('content-length');
    headers.delete('etag'); // the tag is of Lookout's words
    c.res = undefined;
    c.res = new Response(JSON.stringify(body), { status, headers });
  };
}
