/**
 * An idempotent outbound GET (a peer's health, readiness or model list) asked once more on a fresh connection
 * when the first attempt's connection was reset. Node's fetch pools keep-alive sockets; one the peer had
 * already closed (after a restart, or its idle timeout) fails with a reset that says nothing about the peer
 * now, and must not mark it unreachable and take readiness with it. A refused connection, a timeout or any
 * HTTP answer is not retried: that is the answer.
 */

/** Failures of a reused connection the peer had closed (undici calls the last "other side closed"). */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

export function isStaleSocketFailure(err: unknown): boolean {
  const code = err instanceof Error ? (err.cause as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === 'string' && STALE_SOCKET_CODES.has(code);
}

/** fetch(url, init) for a GET, once more when the connection was reset. `init.signal` bounds both attempts. */
export async function fetchIdempotent(url: string, init: RequestInit): Promise<Response> {
  if (init.method && init.method !== 'GET' && init.method !== 'HEAD') throw new TypeError('fetchIdempotent is for GET and HEAD only');
  try {
    return await fetch(url, init);
  } catch (err) {
    if (!isStaleSocketFailure(err) || init.signal?.aborted) throw err;
    return await fetch(url, init);
  }
}
