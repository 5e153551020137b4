import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseMime } from '../../../test/helpers/smtp-sink.js';
import { composePersonRegisteredMail } from './compose.js';
import { createFileTransport, outboxFileEventId } from './file-transport.js';
import type { MailMessage } from './types.js';

const from = { email: 'lookout@localhost', name: 'Lookout' };
const to = [
  { email: 'security@example.com', name: 'Security Team' },
  { email: 'oncall@example.com', name: '' },
];

function mail(eventId: string): MailMessage {
  return composePersonRegisteredMail(
    {
      event_type: 'person_registered',
      timestamp: '2025-03-04T05:06:07.890Z',
      source: 'lookout-api',
      camera_id: '<script>alert(1)</script>',
      person_name: "o'brien-&-co",
      face_count: 2,
      detection_method: 'cascade',
    },
    { from, to, eventId },
  );
}

describe('file transport', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-outbox-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('writes one complete .eml per event, with both parts and the right headers', async () => {
    const outbox = path.join(dir, 'outbox');
    const transport = createFileTransport(outbox);
    expect(transport.kind).toBe('file');
    expect(transport.target).toBe(outbox);
    const { id } = await transport.send(mail('evt-1'));
    await transport.close();

    expect(await fs.readdir(outbox)).toEqual([id]);
    expect(id).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-evt-1\.eml$/);
    expect(outboxFileEventId(id)).toBe('evt-1');

    const raw = await fs.readFile(path.join(outbox, id), 'utf8');
    expect(raw).not.toContain('\r\n');
    const message = parseMime(raw);
    expect(message.contentType).toBe('multipart/alternative');
    expect(message.header('From')).toBe('Lookout <lookout@localhost>');
    expect(message.header('To')).toBe('Security Team <security@example.com>, oncall@example.com');
    expect(message.header('Subject')).toBe("New person registered: o'brien-&-co");
    expect(message.header('Message-ID')).toBe('<evt-1@lookout>');
    expect(message.header('MIME-Version')).toBe('1.0');
    expect(Number.isNaN(Date.parse(message.header('Date') ?? ''))).toBe(false);

    expect(message.leaves.map((p) => p.contentType)).toEqual(['text/plain', 'text/html']);
    const [text, html] = message.leaves;
    expect(text.body).toContain("Person:           o'brien-&-co");
    expect(text.body).toContain('<script>alert(1)</script>');
    expect(html.body).toContain('o&#39;brien-&amp;-co');
    expect(html.body).not.toContain('<script>');
  });

  it('writes no second file for the same event id, and returns the first one', async () => {
    const transport = createFileTransport(dir);
    const first = await transport.send(mail('evt-2'));
    const again = await transport.send(mail('evt-2'));
    // At the same time too: sends are serialised.
    const [a, b] = await Promise.all([transport.send(mail('evt-3')), transport.send(mail('evt-3'))]);
    const other = await transport.send(mail('x-evt-2'));
    await transport.close();

    expect(again).toEqual(first);
    expect(a).toEqual(b);
    expect(other.id).not.toBe(first.id);
    expect((await fs.readdir(dir)).sort()).toEqual([first.id, a.id, other.id].sort());
    // A fresh transport (a restart) finds the file as well.
    const restarted = createFileTransport(dir);
    expect(await restarted.send(mail('evt-2'))).toEqual(first);
    expect(await fs.readdir(dir)).toHaveLength(3);
  });

  it('names files after a safe form of odd event ids', async () => {
    const transport = createFileTransport(dir);
    const { id } = await transport.send(mail('../../etc/passwd'));
    expect(path.dirname(path.join(dir, id))).toBe(dir);
    expect(id).toMatch(/^[\w.-]+\.eml$/);
    const raw = await fs.readFile(path.join(dir, id), 'utf8');
    expect(parseMime(raw).header('Message-ID')).toMatch(/^<etc_passwd-[0-9a-f]{12}@lookout>$/);
  });

  it('fails with a temporary MailError when the outbox cannot be written', async () => {
    const blocker = path.join(dir, 'file');
    await fs.writeFile(blocker, 'not a directory');
    const transport = createFileTransport(path.join(blocker, 'outbox'));
    await expect(transport.send(mail('evt-4'))).rejects.toMatchObject({ name: 'MailError', permanent: false });
  });
});
