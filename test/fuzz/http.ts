/**
 * The HTTP around a body: content types (right, wrong, odd), extra request headers (request ids, conditional
 * and caching headers, forwarding headers, junk), query strings, and multipart bodies built by hand so they can
 * be malformed (boundaries that do not match, parts without names, truncation, path-like file names).
 */
import fc from 'fast-check';
import { encode } from './request.js';

export const JSON_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/vnd.api+json'];

/** Content types for a JSON body: mostly right, sometimes not (text/plain is what a cross-site form can send). */
export const jsonContentType: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...JSON_TYPES) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<string | null>(
      null,
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'multipart/form-data; boundary=x',
      'application/xml',
      'image/jpeg',
      'application/octet-stream',
      'application/json; charset=latin1',
      'application/jsonx',
      ';',
      '*/*',
      'application/json, text/plain',
    ),
  },
);

/** A header value: only what fetch allows to send (no CR, LF or NUL, Latin-1). */
const headerValue = fc
  .string({ unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)), maxLength: 80 })
  .map((s) => s.trim());

const requestId = fc.oneof(
  fc.constantFrom('abc-123', 'a'.repeat(64), 'a'.repeat(65), 'with space', 'ünïcode', '../../etc', '<script>', '', 'a:b.c_d-e'),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,70}$/),
  headerValue,
);

/** Extra headers a client or a proxy may add; none of them may turn a request into a 5xx. */
export const extraHeaders: fc.Arbitrary<[string, string][]> = fc
  .array(
    fc.oneof(
      requestId.map((v) => ['x-request-id', v] as [string, string]),
      fc.constantFrom<[string, string]>(
        ['if-none-match', '{{etag}}'],
        ['if-none-match', '*'],
        ['if-none-match', 'W/{{etag}}'],
        ['if-none-match', '"x", {{etag}}'],
        ['if-modified-since', 'Thu, 01 Jan 1970 00:00:00 GMT'],
        ['accept', 'text/event-stream'],
        ['accept', 'application/xml'],
        ['accept-encoding', 'gzip, br, zstd'],
        ['range', 'bytes=0-10'],
        ['range', 'bytes=99999999-'],
        ['cookie', 'session=1; a=b'],
        ['authorization', 'Bearer x'],
        ['x-forwarded-for', '10.0.0.1, 127.0.0.1'],
        ['x-forwarded-proto', 'https'],
        ['forwarded', 'for=1.2.3.4;proto=http'],
        ['sec-fetch-site', 'same-origin'],
        ['sec-fetch-site', 'none'],
        ['sec-fetch-mode', 'navigate'],
        ['x-http-method-override', 'DELETE'],
        ['expect', '100-continue'],
        ['cache-control', 'no-cache'],
        ['user-agent', ''],
      ),
      fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerValue),
    ),
    { maxLength: 3 },
  )
  .map((list) => {
    // One value per name: fetch would join repeats with a comma, which reads as a different request.
    const seen = new Set<string>();
    return list.filter(([k]) => !seen.has(k) && seen.add(k));
  });

/** A query string (with the `?`) from key/value choices, sometimes repeated keys or raw junk. */
export function queryString(keys: string[], values: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const pair = fc.tuple(
    fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) }),
    values,
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 8,
      arbitrary: fc
        .array(pair, { maxLength: 4 })
        .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')}` : '')),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom('?', '?&&', '?=', '?limit', '?%', '?limit=%zz', '?a[b]=1', '?__proto__[x]=1', '?limit=1#frag'),
    },
  );
}

/** Query values: numbers in many spellings and text. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 1005 }).map(String),
  fc.constantFrom(
    '',
    ' 5',
    '5.0',
    '1e3',
    '0x10',
    'NaN',
    'Infinity',
    '-0',
    '99999999999999999999',
    '١٢',
    'recognition',
    'objects',
    'compliant',
    'violation',
  ),
  fc.string({ maxLength: 10 }),
);

/** One part of a hand-built multipart body. */
export interface Part {
  name: string | null;
  filename?: string;
  type?: string;
  body: Uint8Array;
}

export type MultipartFlaw =
  | 'none'
  | 'wrong-boundary'
  | 'no-closing'
  | 'truncated'
  | 'no-boundary-param'
  | 'lf-only'
  | 'quoted-boundary'
  | 'preamble';

export const multipartFlaw: fc.Arbitrary<MultipartFlaw> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<MultipartFlaw>('none') },
  {
    weight: 4,
    arbitrary: fc.constantFrom<MultipartFlaw>(
      'wrong-boundary',
      'no-closing',
      'truncated',
      'no-boundary-param',
      'lf-only',
      'quoted-boundary',
      'preamble',
    ),
  },
);

const BOUNDARY = '----lookoutFuzzBoundary7MA4YWxkTrZu0gW';

function quote(text: string): string {
  return text.replace(/["\\\r\n]/g, (c) => (c === '"' ? '%22' : c === '\\' ? '\\\\' : '%0A'));
}

/** The body and content type of a multipart request with these parts, with a flaw when asked. */
export function multipart(parts: Part[], flaw: MultipartFlaw): { type: string; body: Uint8Array } {
  const eol = flaw === 'lf-only' ? '\n' : '\r\n';
  const chunks: Buffer[] = [];
  if (flaw === 'preamble') chunks.push(Buffer.from(`this is a preamble${eol}`));
  for (const part of parts) {
    let head = `--${BOUNDARY}${eol}Content-Disposition: form-data`;
    if (part.name !== null) head += `; name="${quote(part.name)}"`;
    if (part.filename !== undefined) head += `; filename="${quote(part.filename)}"`;
    head += eol;
    if (part.type !== undefined) head += `Content-Type: ${part.type}${eol}`;
    chunks.push(Buffer.from(`${head}${eol}`, 'utf8'), Buffer.from(part.body), Buffer.from(eol));
  }
  if (flaw !== 'no-closing') chunks.push(Buffer.from(`--${BOUNDARY}--${eol}`));
  let body = new Uint8Array(Buffer.concat(chunks));
  if (flaw === 'truncated') body = body.subarray(0, Math.floor(body.length * 0.6));
  const type =
    flaw === 'wrong-boundary'
      ? 'multipart/form-data; boundary=somethingElse'
      : flaw === 'no-boundary-param'
        ? 'multipart/form-data'
        : flaw === 'quoted-boundary'
          ? `multipart/form-data; boundary="${BOUNDARY}"`
          : `multipart/form-data; boundary=${BOUNDARY}`;
  return { type, body };
}

/** File names a multipart file part may carry: ordinary, path-like, odd. */
export const fileName: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('capture.jpg', 'photo.png', 'x') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '../../etc/passwd',
      '..\\..\\x.jpg',
      '/abs/path.jpg',
      '.htaccess',
      '',
      'a'.repeat(300),
      'évian.jpg',
      'name"; filename="other.jpg',
      'x.svg',
      'nul\u0000.jpg',
    ),
  },
);
