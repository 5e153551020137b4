/**
 * Files from a directory with the caching a browser-first app needs: an ETag on every file (size and
 * modification time, so a rebuild or an upgrade changes it), 304 for a matching If-None-Match or an unchanged
 * If-Modified-Since, a Cache-Control chosen per path, and content types for model files (.onnx, .bin, .md)
 * that the generic MIME table lacks. @hono/node-server's serveStatic sets only Content-Type and
 * Last-Modified (no ETag, no Cache-Control, no 304), hence this module.
 */
import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Context, MiddlewareHandler } from 'hono';
import { getMimeType } from 'hono/utils/mime';

/** Content types that differ from (or are missing in) Hono's table. */
export const CONTENT_TYPES: Record<string, string> = {
  json: 'application/json',
  bin: 'application/octet-stream',
  onnx: 'application/octet-stream',
  wasm: 'application/wasm',
  xml: 'application/xml; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  webmanifest: 'application/manifest+json',
  mjs: 'text/javascript; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
};

export function contentTypeOf(file: string): string {
  const ext = path.extname(file).slice(1).toLowerCase();
  return CONTENT_TYPES[ext] ?? getMimeType(file) ?? 'application/octet-stream';
}

/**
 * Whether an If-None-Match header matches an ETag (weak comparison, as RFC 9110 asks for GET). Entity tags
 * are compared without quotes and `W/`, so a client that sends a bare version string matches too.
 */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (!ifNoneMatch) return false;
  const bare = (tag: string) =>
    tag
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1');
  const want = bare(etag);
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || bare(tag) === want);
}

/** The request path as a file path under `root`, or null for anything that is not a plain, visible file name. */
export function resolveUnder(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const segments = decoded.split('/').slice(1);
  // No empty, dot or hidden segments, no backslashes or NULs: nothing can step out of root or reach a dotfile.
  if (segments.length === 0 || segments.some((s) => s === '' || s.startsWith('.') || /[\\\0]/.test(s))) return null;
  const file = path.join(root, ...segments);
  return file.startsWith(path.resolve(root) + path.sep) ? file : null;
}

export interface StaticFilesOptions {
  /** Absolute directory; a request path `/a/b.js` is the file `<root>/a/b.js`. */
  root: string;
  /** Cache-Control for a request path. */
  cacheControl: (urlPath: string) => string;
  /** More headers for a request path (e.g. Service-Worker-Allowed). */
  headers?: (urlPath: string) => Record<string, string>;
  /** Path of the file to serve instead of the request's (an app's index.html for every route). */
  file?: string;
}

export function etagOf(stat: { size: number; mtimeMs: number }): string {
  return `"${stat.size.toString(16)}-${Math.floor(stat.mtimeMs).toString(16)}"`;
}

/** A file's response (200, or 304 when the browser's copy is current); null when there is no such file. */
export async function fileResponse(
  c: Context,
  file: string,
  opts: Pick<StaticFilesOptions, 'cacheControl' | 'headers'>,
): Promise<Response | null> {
  let stat: import('node:fs').Stats;
  try {
    stat = await fs.stat(file);
  } catch {
    return null;
  }
  if (!stat.isFile()) return null;
  const etag = etagOf(stat);
  const headers: Record<string, string> = {
    etag,
    'last-modified': stat.mtime.toUTCString(),
    'cache-control': opts.cacheControl(c.req.path),
    ...opts.headers?.(c.req.path),
  };
  const ifNoneMatch = c.req.header('if-none-match');
  const ifModifiedSince = c.req.header('if-modified-since');
  // If-None-Match wins when both are sent (RFC 9110 13.2.2); HTTP dates have whole seconds.
  const fresh = ifNoneMatch
    ? etagMatches(ifNoneMatch, etag)
    : !!ifModifiedSince && Math.floor(stat.mtimeMs / 1000) <= Math.floor(Date.parse(ifModifiedSince) / 1000);
  if (fresh) return c.body(null, 304, headers);
  headers['content-type'] = contentTypeOf(file);
  headers['content-length'] = String(stat.size);
  if (c.req.method === 'HEAD') return c.body(null, 200, headers);
  return c.body(Readable.toWeb(createReadStream(file)) as ReadableStream, 200, headers);
}

/**
 * Serves GET and HEAD requests from a directory; anything it does not have goes to the next handler.
 */
export function staticFiles(opts: StaticFilesOptions): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    const file = opts.file ?? resolveUnder(opts.root, c.req.path);
    const res = file ? await fileResponse(c, file, opts) : null;
    if (!res) return next();
    return res;
  };
}
