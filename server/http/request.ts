/**
 * Reading request bodies with every failure turned into a clear 4xx: the body limit (413, answered so that
 * clients still sending read it), a client that hung up mid-body (a one-line "client aborted", not an error),
 * JSON against its schema.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import type { z } from 'zod';
import { ApiError, errorBody } from './errors.js';

/** The client closed the connection before its request body was complete; the 400 is for the log and metrics. */
export class ClientAbortError extends ApiError {
  constructor() {
    super('bad_request', 'the client closed the connection before the request body was complete');
  }
}

/** Whether an error is Node's for a connection the client closed mid-request ("aborted", a reset, a premature close). */
export function isAbortError(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException | undefined;
  return e?.code === 'ECONNRESET' || e?.code === 'ERR_STREAM_PREMATURE_CLOSE' || e?.message === 'aborted';
}

/** Whether a failure to read the body means the client went away (an abort error, or the request's signal). */
export function isClientAbort(c: Context, err: unknown): boolean {
  return c.req.raw.signal?.aborted === true || isAbortError(err);
}

/** The body as text; a client that hung up mid-body is a ClientAbortError. */
export async function readBodyText(c: Context): Promise<string> {
  try {
    return await c.req.text();
  } catch (err) {
    if (isClientAbort(c, err)) throw new ClientAbortError();
    throw err;
  }
}

/** Parses a JSON body against a schema. Empty body: `{}` when `emptyAs` is given, else 400. */
export async function readJson<T extends z.ZodType>(c: Context, schema: T, emptyAs?: unknown): Promise<z.output<T>> {
  const type = c.req.header('content-type') ?? '';
  const text = await readBodyText(c);
  let body: unknown;
  if (text.trim() === '') {
    if (emptyAs === undefined) throw new ApiError('missing_field', 'the request body is empty; send a JSON object');
    body = emptyAs;
  } else {
    if (type && !/^application\/(.+\+)?json\b/i.test(type) && !/^text\/plain\b/i.test(type)) {
      throw new ApiError('unsupported_media_type', `send the body as application/json (got ${type.split(';')[0]})`);
    }
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError('invalid_json', 'the request body is not valid JSON');
    }
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length ? `field "${issue.path.join('.')}": ` : '';
    const message =
      typeof body !== 'object' || body === null || Array.isArray(body) ? 'the body must be a JSON object' : `${where}${issue.message}`;
    throw new ApiError('bad_request', message);
  }
  return parsed.data;
}

/**
 * Requests whose `Expect: 100-continue` was not answered with 100 because their declared body is over the limit:
 * the client has not sent the body, so the 413 goes out at once (see answerExpectContinue).
 */
const refusedBeforeBody = new WeakSet<IncomingMessage>();

/**
 * Honours `Expect: 100-continue` on a Node HTTP server: a request whose Content-Length is over the body limit gets
 * no 100, so the app's 413 (bodyLimit) reaches the client before it sends a byte of the body; the others get 100
 * and go on as usual. Without a `checkContinue` listener Node sends every client 100 at once.
 */
export function answerExpectContinue(server: Server, maxBytes: number): void {
  server.on('checkContinue', (req: IncomingMessage, res) => {
    if (Number(req.headers['content-length']) > maxBytes) refusedBeforeBody.add(req);
    else res.writeContinue();
    server.emit('request', req, res);
  });
}

export interface BodyLimitOptions {
  maxBytes: number;
  /** Of a body over the limit, read and dropped at most this many bytes in all before answering (default 2 x maxBytes). */
  drainBytes?: number;
  /** ... and for at most this long (default 10 s). */
  drainMs?: number;
  /**
   * Whether a request goes to a route that reads a body (default: every one). Others are left alone: their body is
   * never read, and a path or method outside the table gets its 404 or 405, not an error about a body it ignores.
   */
  readsBody?: (method: string, path: string) => boolean;
}

/**
 * The body limit: a body over `maxBytes` is answered 413 `payload_too_large`. A client that sends its whole body
 * before reading the answer (Python's urllib, many scripts) would see a broken pipe if the server answered and
 * closed while it was still sending, so the rest of the body is first read and dropped, up to `drainBytes` in all
 * and `drainMs`; a body longer than that is answered at once, and the connection closed. With
 * `Expect: 100-continue` (curl) the 413 comes before the body (answerExpectContinue).
 */
export function bodyLimit(options: BodyLimitOptions): MiddlewareHandler {
  const max = options.maxBytes;
  const drainBytes = options.drainBytes ?? 2 * max;
  const drainMs = options.drainMs ?? 10_000;
  const tooLarge = (c: Context, drained: boolean) =>
    c.json(
      errorBody('payload_too_large', `the request body is larger than ${max} bytes`),
      413,
      // Not all of the body was read: the rest is still on the wire, so no next request may follow on it.
      drained ? {} : { connection: 'close' },
    );
  return async (c, next) => {
    const body = c.req.raw.body;
    if (!body || (options.readsBody && !options.readsBody(c.req.method, c.req.path))) return next();
    const declared = c.req.raw.headers.get('content-length');
    if (declared !== null && !c.req.raw.headers.has('transfer-encoding')) {
      const length = Number(declared);
      if (!(length > max)) return next();
      const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
      if ((incoming && refusedBeforeBody.has(incoming)) || length > drainBytes) return tooLarge(c, false);
      return tooLarge(c, await drain(body.getReader(), drainBytes, drainMs));
    }
    // No length given (chunked): read up to the limit here, and hand the handler the bytes read.
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch (err) {
        if (isClientAbort(c, err)) throw new ClientAbortError();
        throw err;
      }
      if (step.done) break;
      size += step.value.length;
      if (size > max) return tooLarge(c, await drain(reader, drainBytes - size, drainMs));
      chunks.push(step.value);
    }
    c.req.raw = new Request(c.req.raw, { body: Buffer.concat(chunks, size) });
    return next();
  };
}

/** Reads and drops the rest of a body, at most `bytes` and `ms`; true when it reached the end. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, bytes: number, ms: number): Promise<boolean> {
  let left = bytes;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  try {
    while (left >= 0) {
      const step = await Promise.race([reader.read(), timeout]);
      if (step === 'timeout') return false;
      if (step.done) return true;
      left -= step.value.length;
    }
    return false;
  } catch {
    // The client went away while we read: nobody is left to answer.
    return false;
  } finally {
    clearTimeout(timer);
    // Not cancel(): that would destroy the socket before the 413 is written.
    try {
      reader.releaseLock();
    } catch {
      // a read still pending on an old runtime: the stream goes with the request
    }
  }
}
