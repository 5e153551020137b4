/**
 * One fuzz case: an HTTP request as plain data (method, path with query, headers, body bytes), so fast-check can
 * generate, shrink and print it. Paths and headers may hold placeholders that are filled from what the service
 * stored so far when the case runs (`{{label:3}}`: the 3rd acknowledged label modulo their number), so a case
 * refers to real state yet stays replayable from its seed.
 */
import crypto from 'node:crypto';
import fc from 'fast-check';

export interface FuzzRequest {
  /** The route-table entry the generator aimed at (`undocumented` for paths and methods outside it). */
  route: string;
  method: string;
  /** Path and query, percent-encoded as sent. */
  path: string;
  headers: [string, string][];
  body?: Uint8Array;
  /** What the generator meant, in words (`truncated png`, `NFD label`, ...), for the report. */
  note: string;
  /** For uploads: the raw label and the image bytes the server should store when it answers 200. */
  upload?: { label: unknown; image: Uint8Array | null };
  /** The one answer this request must get (e.g. 403 `forbidden_origin` for another web page's request). */
  expect?: { status: number; code: string };
}

/** What the service stored so far, for placeholders. */
export interface FuzzState {
  /** Acknowledged uploads: label as answered, filename, and the raw label sent. */
  uploads: { label: string; filename: string; raw: string }[];
  /** The last ETag /api/models/trained answered. */
  etag: string | null;
}

const PLACEHOLDER = /\{\{(label|raw|file|etag):?(\d*)\}\}/g;

/** Safe for encodeURIComponent: lone surrogates become U+FFFD, as any UTF-8 client would send them. */
export function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** encodeURIComponent that never throws (a lone surrogate is sent as U+FFFD). */
export const encode = (text: string): string => encodeURIComponent(wellFormed(text));

function pick<T>(list: T[], n: number): T | undefined {
  return list.length ? list[n % list.length] : undefined;
}

/** Fills the placeholders of a path or header value from the state (`nobody`, `x.jpg` when there is none yet). */
export function fill(text: string, state: FuzzState): string {
  return text.replace(PLACEHOLDER, (_all, kind: string, n: string) => {
    const upload = pick(state.uploads, Number(n || 0));
    if (kind === 'label') return encode(upload?.label ?? 'nobody');
    if (kind === 'raw') return encode(upload?.raw ?? 'nobody');
    if (kind === 'file') return encode(upload?.filename ?? 'x.jpg');
    return state.etag ?? '"none"';
  });
}

export function resolve(req: FuzzRequest, state: FuzzState): FuzzRequest {
  return { ...req, path: fill(req.path, state), headers: req.headers.map(([k, v]) => [k, fill(v, state)]) };
}

function preview(body: Uint8Array): string {
  const text = Buffer.from(body).toString('utf8');
  // Mostly printable: show the text (cut); otherwise the first bytes in hex and a digest to compare runs.
  const printable = text.replace(/[^\x20-\x7e\n\r\t\u00a0-\uffff]/g, '').length / Math.max(1, text.length);
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 12);
  if (printable > 0.95)
    return `${JSON.stringify(text.length > 400 ? `${text.slice(0, 400)}...` : text)} (${body.length} bytes, sha256 ${hash})`;
  return `hex ${Buffer.from(body.subarray(0, 48)).toString('hex')}${body.length > 48 ? '...' : ''} (${body.length} bytes, sha256 ${hash})`;
}

/** One line per request, for failure reports. */
export function describeRequest(req: FuzzRequest): string {
  const headers = req.headers.map(([k, v]) => `${k}: ${JSON.stringify(v.length > 120 ? `${v.slice(0, 120)}...` : v)}`).join(', ');
  return `[${req.route}: ${req.note}] ${req.method} ${req.path} {${headers}}${req.body ? ` body ${preview(req.body)}` : ''}`;
}

/** fast-check prints counterexamples with this, so a shrunk case reads as a request, not a byte dump. */
export function printable(req: FuzzRequest): FuzzRequest {
  return Object.assign(req, { [fc.toStringMethod]: () => describeRequest(req) });
}

export const utf8 = (text: string): Uint8Array => new Uint8Array(Buffer.from(text, 'utf8'));
