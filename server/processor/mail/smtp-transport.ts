/**
 * The `smtp` mail transport, with nodemailer: `smtp://user:pass@host:587` upgrades with STARTTLS when the server
 * offers it (nodemailer's default), `smtps://host:465` speaks TLS from the start. The password never leaves this
 * module: `target` has no credentials and error messages are scrubbed of them.
 */
import nodemailer, { type NodemailerError } from 'nodemailer';
import { mimeFields } from './compose.js';
import { MailError, type MailTransport } from './types.js';

export interface SmtpTransportOptions {
  /** TLS options for the connection (a private CA for a self-signed server certificate, in tests above all). */
  tls?: { ca?: string | Buffer; rejectUnauthorized?: boolean };
}

/** Codes of failures that no retry can fix: a bad configuration or an envelope nodemailer refuses. */
const PERMANENT_CODES = new Set(['ECONFIG', 'EENVELOPE', 'ENOAUTH']);

/**
 * Whether an SMTP failure is permanent: a 5xx reply (RFC 5321: permanent negative completion) except 503 (bad
 * sequence of commands: a fresh connection can succeed), or a configuration error. 4xx replies (421, 45x),
 * refused connections, resets and timeouts are temporary.
 */
export function isPermanentSmtpError(err: Pick<NodemailerError, 'code' | 'responseCode'>): boolean {
  const status = err.responseCode;
  if (typeof status === 'number') return status >= 500 && status < 600 && status !== 503;
  return typeof err.code === 'string' && PERMANENT_CODES.has(err.code);
}

export function createSmtpTransport(smtpUrl: string, timeoutMs: number, opts: SmtpTransportOptions = {}): MailTransport {
  const url = new URL(smtpUrl);
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw new Error(`MAIL_SMTP_URL must be smtp:// or smtps://, not ${url.protocol}//`);
  const secure = url.protocol === 'smtps:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  const target = `${url.protocol}//${url.host || host}${url.port ? '' : `:${port}`}`;
  // Every form the password could take in a message: as given, URL-encoded, and in AUTH PLAIN / LOGIN base64.
  const secrets = pass
    ? [...new Set([pass, url.password, b64(`\u0000${user}\u0000${pass}`), b64(pass)])].sort((a, b) => b.length - a.length)
    : [];
  const scrub = (text: string) => secrets.reduce((out, secret) => out.split(secret).join('***'), text);

  // Each step (connect, greeting, each reply) has timeoutMs; the whole exchange is bounded too, against a server
  // that answers just often enough.
  const overallMs = timeoutMs * 3;
  const transporter = nodemailer.createTransport({
    host,
    port,
    secure,
    auth: user || pass ? { user, pass } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    dnsTimeout: timeoutMs,
    tls: opts.tls,
    logger: false,
    debug: false,
  });

  return {
    kind: 'smtp',
    target,
    async send(message) {
      try {
        const info = await transporter.sendMail({ ...mimeFields(message), signal: AbortSignal.timeout(overallMs) });
        // smtp-server, Postfix and most others answer `250 ... queued as <id>`: the id there; else our Message-ID.
        const queued = /queued as\s+<?([^\s>]+)>?/i.exec(String(info.response ?? ''));
        return { id: queued?.[1] ?? info.messageId };
      } catch (err) {
        const e = err as NodemailerError;
        const reason = e.name === 'AbortError' || e.code === 'EABORT' ? `not done within ${overallMs} ms` : e.message;
        const code = e.responseCode ?? e.code;
        throw new MailError(
          scrub(`SMTP ${target}: ${reason}${code && !reason.includes(String(code)) ? ` (${code})` : ''}`),
          isPermanentSmtpError(e),
        );
      }
    },
    async close() {
      transporter.close();
    },
  };
}

function b64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}
