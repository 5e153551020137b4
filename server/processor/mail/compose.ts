/**
 * The mails the processor sends: one per `person_registered` event (to the security team) and one per change of
 * a remote model's state (to ML operations). Each has an HTML part (a small inline-styled table: mail clients
 * drop <style> blocks) and a plain-text part with the same facts. Every value taken from an event is escaped in
 * the HTML, and subjects carry no line breaks, so an event cannot inject markup or mail headers.
 */
import { type PersonRegisteredEvent, type RemoteModelStatusEvent, remoteModelState } from '../../../shared/events/face-events.js';
import type { SendMailOptions } from 'nodemailer';
import { safeEventId, withoutCredentials } from '../safe-text.js';
import type { MailAddress, MailMessage } from './types.js';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes the five characters that matter in HTML text and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** C0 controls, DEL and the Unicode line/paragraph separators: none belongs in a header. */
function isControl(c: string): boolean {
  const code = c.charCodeAt(0);
  return code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029;
}

/** A subject line: control characters (CR and LF above all: header injection) become spaces, runs collapse. */
export function sanitizeSubject(value: string, maxLength = 200): string {
  const clean = Array.from(value, (c) => (isControl(c) ? ' ' : c))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  return clean.length > maxLength ? `${clean.slice(0, maxLength - 1)}…` : clean;
}

// Deliberately plain: local part without spaces, quotes or brackets; a host name (a bare `localhost` included).
const EMAIL = /^[^\s@<>()[\]",;:\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** Parses one address: `Name <a@b>`, `"Last, First" <a@b>`, `<a@b>` or `a@b`. */
export function parseAddress(value: string): MailAddress {
  const text = value.trim();
  if (Array.from(text).some(isControl)) throw new Error(`invalid mail address ${JSON.stringify(value)}: control characters`);
  const angled = /^(.*?)\s*<([^<>]*)>$/.exec(text);
  let name = '';
  let email = text;
  if (angled) {
    name = angled[1].trim();
    email = angled[2].trim();
    if (name.startsWith('"') && name.endsWith('"') && name.length >= 2) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
    if (/[<>]/.test(name)) throw new Error(`invalid mail address ${JSON.stringify(value)}: stray angle bracket in the name`);
  }
  if (!EMAIL.test(email)) throw new Error(`invalid mail address ${JSON.stringify(value)}: expected "Name <user@host>" or "user@host"`);
  return { email, name };
}

/** Parses a comma-separated list of addresses (commas inside quotes or angle brackets do not split). */
export function parseAddressList(value: string): MailAddress[] {
  const items: string[] = [];
  let current = '';
  let quoted = false;
  let angled = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i];
    if (c === '\\' && quoted && i + 1 < value.length) {
      current += c + value[++i];
      continue;
    }
    if (c === '"' && !angled) quoted = !quoted;
    else if (c === '<' && !quoted) angled = true;
    else if (c === '>' && !quoted) angled = false;
    if (c === ',' && !quoted && !angled) {
      items.push(current);
      current = '';
    } else {
      current += c;
    }
  }
  items.push(current);
  const addresses = items.map((s) => s.trim()).filter((s) => s.length > 0);
  if (addresses.length === 0) throw new Error(`invalid mail address list ${JSON.stringify(value)}: no address in it`);
  return addresses.map(parseAddress);
}

/**
 * The Message-ID of the mail about an event: `<eventId@lookout>`, so a redelivered mail carries the same one.
 * Characters an RFC 5322 id cannot hold are replaced and a short hash of the original keeps ids distinct.
 */
export function messageIdFor(eventId: string): string {
  return `<${safeEventId(eventId)}@lookout>`;
}

type Row = [label: string, value: string];

const FONT = 'font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif';

function htmlDocument(title: string, heading: string, rows: Row[], extra = ''): string {
  const cells = rows
    .map(
      ([label, value]) =>
        `<tr><th style="text-align:left;padding:6px 12px;border-bottom:1px solid #e5e7eb;color:#6b7280;font-weight:600;white-space:nowrap;vertical-align:top">${escapeHtml(label)}</th>` +
        `<td style="padding:6px 12px;border-bottom:1px solid #e5e7eb;color:#111827;word-break:break-word">${escapeHtml(value)}</td></tr>`,
    )
    .join('\n');
  return [
    '<!DOCTYPE html>',
    '<html lang="en">',
    `<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>`,
    `<body style="margin:0;padding:24px;background:#f9fafb;${FONT};font-size:14px;line-height:1.4">`,
    `<h1 style="margin:0 0 16px;font-size:18px;color:#111827">${escapeHtml(heading)}</h1>`,
    `<table role="presentation" style="border-collapse:collapse;background:#ffffff;border:1px solid #e5e7eb;border-radius:6px">\n${cells}\n</table>`,
    extra,
    `<p style="margin:16px 0 0;color:#9ca3af;font-size:12px">Sent by Lookout.</p>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function textBody(heading: string, rows: Row[], extra = ''): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = rows.map(([label, value]) => `${`${label}:`.padEnd(width + 2)}${value}`);
  return `${heading}\n\n${lines.join('\n')}\n${extra}\n-- \nSent by Lookout.\n`;
}

export function composePersonRegisteredMail(
  event: PersonRegisteredEvent,
  opts: { from: MailAddress; to: MailAddress[]; eventId: string },
): MailMessage {
  const subject = sanitizeSubject(`New person registered: ${event.person_name}`);
  const rows: Row[] = [
    ['Person', event.person_name],
    ['Face count', String(event.face_count)],
    ['Detection method', event.detection_method],
    ['Camera', event.camera_id],
    ['Source', event.source],
    ['Time', event.timestamp],
  ];
  const heading = 'A new person was registered';
  return {
    from: opts.from,
    to: opts.to,
    subject,
    html: htmlDocument(subject, heading, rows),
    text: textBody(heading, rows),
    eventId: opts.eventId,
  };
}

/** The subject of a model status mail, by how the state moved. */
export function remoteStatusSubject(model: string, state: string, previousState: string | null): string {
  if (state === 'unreachable') {
    return previousState === 'unreachable' ? `Model server still unreachable: ${model}` : `Model server unreachable: ${model}`;
  }
  if (previousState === null || previousState === state) return `Model ${model}: ${state}`;
  if (previousState === 'unreachable') return `Model server back: ${model} is ${state}`;
  return `Model ${model}: ${previousState} -> ${state}`;
}

const MAX_JSON_CHARS = 20_000;

export function composeRemoteStatusMail(
  event: RemoteModelStatusEvent,
  opts: { from: MailAddress; to: MailAddress[]; eventId: string; previousState: string | null },
): MailMessage {
  const state = remoteModelState(event);
  const subject = sanitizeSubject(remoteStatusSubject(event.model_name, state, opts.previousState));
  const rows: Row[] = [
    ['Model', event.model_name],
    ['Server', withoutCredentials(event.model_server)],
    ['State', state],
    ['Previous state', opts.previousState ?? '(none: first status)'],
    ['Time', event.timestamp],
    ['Camera', event.camera_id],
    ['Source', event.source],
  ];
  let json = JSON.stringify(event.remote_response, null, 2) ?? 'null';
  if (json.length > MAX_JSON_CHARS) json = `${json.slice(0, MAX_JSON_CHARS)}\n… (truncated)`;
  const heading = state === 'unreachable' ? 'The model server could not be reached' : 'Remote model status';
  const pre =
    `<h2 style="margin:20px 0 8px;font-size:14px;color:#374151">Model server response</h2>\n` +
    `<pre style="margin:0;padding:12px;background:#111827;color:#f9fafb;border-radius:6px;font-size:12px;overflow:auto;white-space:pre-wrap">${escapeHtml(json)}</pre>`;
  return {
    from: opts.from,
    to: opts.to,
    subject,
    html: htmlDocument(subject, heading, rows, pre),
    text: textBody(heading, rows, `\nModel server response:\n${json}\n`),
    eventId: opts.eventId,
  };
}

/** The fields nodemailer builds the MIME message from (file outbox and SMTP write the same message). */
export function mimeFields(message: MailMessage, date: Date = new Date()): SendMailOptions {
  return {
    from: { name: message.from.name, address: message.from.email },
    to: message.to.map((a) => ({ name: a.name, address: a.email })),
    subject: sanitizeSubject(message.subject),
    text: message.text,
    html: message.html,
    messageId: messageIdFor(message.eventId),
    date,
    // Strings only: never let a body be read from a path or URL.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}
