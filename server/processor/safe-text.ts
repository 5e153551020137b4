/**
 * Text the processor derives from outside values before it shows, logs, publishes or stores them: errors
 * without credentials, URLs without credentials, event ids fit to be file names and Message-IDs.
 */
import { createHash } from 'node:crypto';

/** A URL without its user name and password; anything that is not a URL has its `//user:pass@` removed. */
export function withoutCredentials(value: string): string {
  try {
    const url = new URL(value);
    if (!url.username && !url.password) return value;
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return value.replace(/\/\/[^/@\s]*@/g, '//');
  }
}

/** An error's message for logs and /ready: what failed (with its cause's code), never a URL's credentials. */
export function describeError(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return 'timed out';
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `${e?.message ?? String(err)}${cause ? ` (${cause})` : ''}`.replace(/\/\/[^/@\s]*@/g, '//');
}

/**
 * The event id reduced to `[A-Za-z0-9._-]` (ids come from message headers: never trust them as file names or
 * Message-IDs), with a short hash of the original where it had to change so distinct ids stay distinct.
 */
export function safeEventId(eventId: string): string {
  if (/^[A-Za-z0-9._-]{1,120}$/.test(eventId) && !eventId.startsWith('.')) return eventId;
  const hash = createHash('sha256').update(eventId).digest('hex').slice(0, 12);
  const readable = eventId
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 80);
  return readable ? `${readable}-${hash}` : hash;
}
