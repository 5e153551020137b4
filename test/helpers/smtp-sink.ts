/**
 * A real SMTP server for tests (the `smtp-server` package) on 127.0.0.1: it requires AUTH (PLAIN/LOGIN) with the
 * given user, takes every mail and keeps it (envelope, raw message, whether the session was encrypted). Plain by
 * default (STARTTLS disabled); give it a key and certificate to offer STARTTLS, or `implicitTls` for smtps.
 * Also here: `generateSelfSignedCert` (openssl) and `parseMime`, a small MIME reader for asserting on messages.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SMTPServer } from 'smtp-server';

export interface SinkMessage {
  from: string;
  to: string[];
  raw: string;
  /** The session was encrypted (STARTTLS or implicit TLS) when the message came. */
  secure: boolean;
  /** The user the client authenticated as. */
  user: string | undefined;
}

export interface SmtpSinkOptions {
  /** Accepted credentials; default `lookout` / `s3cret-pa55`. */
  user?: string;
  pass?: string;
  /** PEM key and certificate: offers STARTTLS (or serves TLS from the start with `implicitTls`). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  implicitTls?: boolean;
}

export interface SmtpSink {
  readonly port: number;
  readonly messages: SinkMessage[];
  /** The next `n` messages are refused after DATA with this reply code (e.g. 451 or 550). */
  failNext(n: number, responseCode: number): void;
  close(): Promise<void>;
}

export const SINK_USER = 'lookout';
export const SINK_PASS = 's3cret-pa55';

export async function startSmtpSink(opts: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const user = opts.user ?? SINK_USER;
  const pass = opts.pass ?? SINK_PASS;
  const messages: SinkMessage[] = [];
  let failures = { left: 0, code: 451 };
  let queued = 0;
  const server = new SMTPServer({
    secure: opts.implicitTls === true,
    key: opts.tls?.key,
    cert: opts.tls?.cert,
    disabledCommands: opts.tls ? [] : ['STARTTLS'],
    authMethods: ['PLAIN', 'LOGIN'],
    authOptional: false,
    allowInsecureAuth: true,
    logger: false,
    closeTimeout: 1000,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) return callback(null, { user: auth.username });
      callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (failures.left > 0) {
          failures.left--;
          return callback(Object.assign(new Error(`sink: refusing with ${failures.code}`), { responseCode: failures.code }));
        }
        const mailFrom = session.envelope.mailFrom;
        messages.push({
          from: mailFrom ? mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
          user: session.user as string | undefined,
        });
        callback(null, `OK: message queued as SINK${++queued}`);
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    messages,
    failNext(n, responseCode) {
      failures = { left: n, code: responseCode };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A throwaway self-signed certificate for 127.0.0.1 and localhost (openssl), valid one day. */
export async function generateSelfSignedCert(): Promise<{ key: string; cert: string; dir: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-cert-'));
  const keyFile = path.join(dir, 'key.pem');
  const certFile = path.join(dir, 'cert.pem');
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-days',
    '1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]);
  return { key: await fs.readFile(keyFile, 'utf8'), cert: await fs.readFile(certFile, 'utf8'), dir };
}

export interface MimePart {
  /** Header values by lower-case name, unfolded, RFC 2047 words decoded. */
  headers: Map<string, string[]>;
  /** `type/subtype`, lower case (`text/plain` when absent). */
  contentType: string;
  /** Decoded body (transfer encoding undone) of a leaf part; '' for a multipart. */
  body: string;
  /** Leaf parts, depth first (the part itself when it is not multipart). */
  leaves: MimePart[];
  header(name: string): string | undefined;
}

function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_, _charset: string, enc: string, text: string) => {
      if (enc.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
      return decodeQuotedPrintable(text.replace(/_/g, ' '));
    });
}

function decodeQuotedPrintable(text: string): string {
  const bytes: number[] = [];
  const soft = text.replace(/=\r?\n/g, '');
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(Number.parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Parses a MIME message (enough for the messages nodemailer writes: multipart, QP, base64, 7bit). */
export function parseMime(raw: string): MimePart {
  const text = raw.replace(/\r\n/g, '\n');
  const split = text.indexOf('\n\n');
  const head = split === -1 ? text : text.slice(0, split);
  const content = split === -1 ? '' : text.slice(split + 2);
  const headers = new Map<string, string[]>();
  for (const line of head.replace(/\n[ \t]+/g, ' ').split('\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), decodeWords(line.slice(colon + 1).trim())]);
  }
  const header = (name: string) => headers.get(name.toLowerCase())?.[0];
  const typeHeader = header('content-type') ?? 'text/plain';
  const contentType = typeHeader.split(';')[0].trim().toLowerCase();
  if (contentType.startsWith('multipart/')) {
    const boundary = /boundary="?([^";]+)"?/i.exec(typeHeader)?.[1];
    if (!boundary) throw new Error(`multipart without a boundary: ${typeHeader}`);
    const sections = content.split(`--${boundary}`);
    const children = sections
      .slice(1)
      .filter((s) => !s.startsWith('--'))
      .map((s) => parseMime(s.replace(/^\n/, '')));
    return { headers, contentType, body: '', leaves: children.flatMap((c) => c.leaves), header };
  }
  const encoding = (header('content-transfer-encoding') ?? '7bit').toLowerCase();
  let body = content;
  if (encoding === 'base64') body = Buffer.from(content.replace(/\s+/g, ''), 'base64').toString('utf8');
  else if (encoding === 'quoted-printable') body = decodeQuotedPrintable(content);
  const part: MimePart = { headers, contentType, body, leaves: [], header };
  part.leaves.push(part);
  return part;
}
