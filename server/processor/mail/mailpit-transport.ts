/**
 * The `mailpit` mail transport: Mailpit's HTTP send API (`POST /api/v1/send`, JSON in, `{ "ID": ... }` out).
 * Credentials in the base URL (Mailpit's `--ui-auth`) travel as a Basic Authorization header: fetch refuses
 * URLs that carry them, and they must not reach logs through `target`.
 */
import { messageIdFor, sanitizeSubject } from './compose.js';
import { MailError, type MailTransport } from './types.js';

/** The body Mailpit's send API takes (the fields the processor uses). */
export interface MailpitSendRequest {
  From: { Email: string; Name: string };
  To: { Email: string; Name: string }[];
  Subject: string;
  HTML: string;
  Text: string;
  Headers?: Record<string, string>;
  Tags: string[];
}

const SNIPPET_CHARS = 200;

function snippet(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat.length > SNIPPET_CHARS ? `${flat.slice(0, SNIPPET_CHARS)}…` : flat;
}

/** 4xx other than 408 (timeout) and 429 (rate limited) will get the same answer again. */
function permanentStatus(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export function createMailpitTransport(baseUrl: string, timeoutMs: number): MailTransport {
  const url = new URL(baseUrl);
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  url.username = '';
  url.password = '';
  url.search = '';
  url.hash = '';
  // Keep a path prefix (Mailpit's --webroot): resolve relative to it.
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  const target = url.toString().replace(/\/$/, '');
  const sendUrl = new URL('api/v1/send', url).toString();
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (user || pass) headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

  return {
    kind: 'mailpit',
    target,
    async send(message) {
      const body: MailpitSendRequest = {
        From: { Email: message.from.email, Name: message.from.name },
        To: message.to.map((a) => ({ Email: a.email, Name: a.name })),
        Subject: sanitizeSubject(message.subject),
        HTML: message.html,
        Text: message.text,
        // Mailpit keeps a Message-ID given here, so a redelivery is recognisable there too.
        Headers: { 'Message-ID': messageIdFor(message.eventId) },
        Tags: ['lookout'],
      };
      let response: Response;
      let text: string;
      try {
        response = await fetch(sendUrl, {
          method: 'POST',
          headers,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
          redirect: 'error',
        });
        text = await response.text();
      } catch (err) {
        const e = err as Error;
        const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${e.message}${causeOf(e) ? ` (${causeOf(e)})` : ''}`;
        throw new MailError(`Mailpit ${target}: ${why}`, false);
      }
      if (!response.ok) {
        throw new MailError(`Mailpit ${target}: HTTP ${response.status}: ${snippet(text)}`, permanentStatus(response.status));
      }
      // Accepted: an unexpected body is no reason to send the mail again.
      let id = '';
      try {
        const parsed = JSON.parse(text) as { ID?: unknown };
        if (typeof parsed.ID === 'string') id = parsed.ID;
      } catch {}
      return { id: id || messageIdFor(message.eventId) };
    },
    async close() {},
  };
}

/** The code or message of a fetch failure's cause (`ECONNREFUSED`), which fetch's own message hides. */
function causeOf(err: Error): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (!cause) return '';
  return typeof cause.code === 'string' ? cause.code : typeof cause.message === 'string' ? cause.message : '';
}
