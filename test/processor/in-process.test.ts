/**
 * The event processor with its embedded defaults (no KAFKA_BROKERS: the in-process queue on disk; mails as
 * `.eml` files in the outbox) against the real Lookout server as its backend.
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { personRegisteredEvent } from '../../shared/events/face-events.js';
import { listenModelServer, type RunningModelServer } from '../../server/model-server/app.js';
import { generateSelfSignedCert, SINK_PASS, SINK_USER, startSmtpSink } from '../helpers/smtp-sink.js';
import { outbox, startBackend, startProcessor, tempDir, waitFor, type InProcessProcessor } from '../helpers/processor-harness.js';
import { readTestImage, type TestServer, uploadImage } from '../helpers/test-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function backend(): Promise<TestServer> {
  const server = await startBackend();
  cleanup.push(() => server.close());
  return server;
}

async function processor(env: Record<string, string>): Promise<InProcessProcessor> {
  const p = await startProcessor(env);
  cleanup.push(() => p.close());
  return p;
}

/**
 * A forwarding proxy on 127.0.0.1 between the processor and the real backend, whose `hold()` keeps the processor's
 * requests waiting until `release()`: a test can make several uploads land between two polls, whatever the load.
 */
async function gatedBackend(target: string): Promise<{ url: string; hold(): void; release(): void }> {
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  const server = http.createServer(async (req, res) => {
    await gate;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await fetch(target + req.url, {
      method: req.method,
      headers: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection')) as Record<
        string,
        string
      >,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const body = Buffer.from(await answer.arrayBuffer());
    const headers = Object.fromEntries([...answer.headers].filter(([k]) => k !== 'content-encoding' && k !== 'content-length'));
    res.writeHead(answer.status, headers).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        open();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release: () => open(),
  };
}

/**
 * Waits for `n` successful polls of the labels to have ended after now. A failed poll (under load the backend's first
 * answer can take longer than the poll's timeout) records nothing: counting it let a test upload before the processor's
 * first start had recorded the existing labels, and that first start then took the new label as existing, silently.
 */
async function polls(p: InProcessProcessor, n: number): Promise<void> {
  const start = Date.now();
  let seen = 0;
  let last = '';
  await waitFor(`${n} polls`, async () => {
    const { last_at: at, ok } = (await p.ready()).polls.labels;
    if (at && at !== last && Date.parse(at) > start) {
      last = at;
      if (ok) seen++;
    }
    return seen >= n;
  });
}

/** The text part of an .eml built by nodemailer (quoted-printable or plain). */
function headerOf(raw: string, name: string): string {
  const m = new RegExp(`^${name}: (.*(?:\\n[ \\t].*)*)`, 'mi').exec(raw);
  return m ? m[1]!.replace(/\n[ \t]+/g, ' ') : '';
}

describe('processor with the embedded defaults (in-process queue, file outbox)', () => {
  it('records the existing labels silently on its first start, then mails security once per new label, escaped', async () => {
    const api = await backend();
    const face = await readTestImage('faces/grace_hopper.jpg');
    expect((await uploadImage(api.url, 'alice', face)).status).toBe(200);
    const data = await tempDir();
    const p = await processor({ DATA_DIR: data, PROCESSOR_BACKEND_URL: api.url, MAIL_SECURITY_TO: 'Security <sec@example.test>' });
    await polls(p, 2);
    expect(await outbox(data)).toEqual([]);

    expect((await uploadImage(api.url, "O'Brien & Co", face)).status).toBe(200);
    expect((await uploadImage(api.url, "O'Brien & Co", face, 'second.jpg')).status).toBe(200);
    const [mail] = await waitFor('the mail', async () => {
      const m = await outbox(data);
      return m.length ? m : null;
    });
    await polls(p, 3);
    const mails = await outbox(data);
    expect(mails).toHaveLength(1);
    expect(headerOf(mail!.raw, 'To')).toContain('sec@example.test');
    expect(headerOf(mail!.raw, 'Subject')).toContain("o'brien-&-co");
    expect(mail!.raw).toContain('Content-Type: text/plain');
    expect(mail!.raw).toContain('Content-Type: text/html');
    // The HTML part carries the label escaped, never raw.
    const html = mail!.raw.slice(mail!.raw.indexOf('Content-Type: text/html'));
    const decoded = html.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    expect(decoded).toContain('o&#39;brien-&amp;-co');
    expect(decoded).not.toContain("o'brien-&-co");
    const ready = await p.ready();
    expect(ready.status).toBe('ready');
    expect(ready.broker.kind).toBe('in-process');
    expect(ready.role).toBe('polling');
    expect(ready.mail).toMatchObject({ transport: 'file', sent: 1, dead_lettered: 0 });
    expect(ready.polls.labels).toMatchObject({ ok: true, known_labels: 2, announced: 1, pending: 0 });
  });

  it('announces nobody twice after a restart, and whoever registered while it was down once it is back', async () => {
    const api = await backend();
    const face = await readTestImage('faces/grace_hopper.jpg');
    const data = await tempDir();
    const env = { DATA_DIR: data, PROCESSOR_BACKEND_URL: api.url };
    const first = await startProcessor(env);
    await polls(first, 1);
    await uploadImage(api.url, 'bob', face);
    await waitFor('bob announced', async () => (await outbox(data)).length === 1);
    await first.close();

    await uploadImage(api.url, 'carol', face);
    const second = await processor(env);
    await waitFor('carol announced', async () => (await outbox(data)).length === 2);
    await polls(second, 3);
    const subjects = (await outbox(data)).map((m) => headerOf(m.raw, 'Subject'));
    expect(subjects).toHaveLength(2);
    expect(subjects.filter((s) => s.includes('bob'))).toHaveLength(1);
    expect(subjects.filter((s) => s.includes('carol'))).toHaveLength(1);
  });

  it('announces the existing labels on a first start with PROCESSOR_ANNOUNCE_EXISTING=true', async () => {
    const api = await backend();
    const face = await readTestImage('faces/grace_hopper.jpg');
    await uploadImage(api.url, 'dave', face);
    await uploadImage(api.url, 'dave', face, 'b.jpg');
    const data = await tempDir();
    await processor({ DATA_DIR: data, PROCESSOR_BACKEND_URL: api.url, PROCESSOR_ANNOUNCE_EXISTING: 'true' });
    const [mail] = await waitFor('dave announced', async () => {
      const m = await outbox(data);
      return m.length ? m : null;
    });
    expect(headerOf(mail!.raw, 'Subject')).toContain('dave');
  });

  it('skips an event of an unknown type (logged) and goes on with the next one', async () => {
    const api = await backend();
    const data = await tempDir();
    const p = await processor({ DATA_DIR: data, PROCESSOR_BACKEND_URL: api.url });
    await polls(p, 1);
    // A message another producer put on the topic, in the queue's own format.
    const queue = path.join(data, 'processor/queue/cv.face.detections');
    await fs.writeFile(
      path.join(queue, '000000000000001-000000000.json'),
      JSON.stringify({ key: 'x', value: JSON.stringify({ event_type: 'camera_tampered', camera_id: 'c1' }), headers: {} }),
    );
    await uploadImage(api.url, 'erin', await readTestImage('faces/grace_hopper.jpg'));
    await waitFor('erin announced', async () => (await outbox(data)).length === 1);
    // The .eml is renamed into the outbox before the send returns and is counted: wait for the count too.
    await waitFor('the mail counted', async () => (await p.ready()).mail.sent === 1);
    const ready = await p.ready();
    expect(ready.queue.unknown_skipped).toBe(1);
    expect(ready.mail.sent).toBe(1);
  });

  it('publishes events with exactly the spec fields and types', async () => {
    const api = await backend();
    const data = await tempDir();
    // A mail sink that never answers keeps the event on the queue (retried in a minute), where it can be read.
    const gated = await gatedBackend(api.url);
    const p = await processor({
      DATA_DIR: data,
      PROCESSOR_BACKEND_URL: gated.url,
      PROCESSOR_CAMERA_ID: 'gate-1',
      MAIL_TRANSPORT: 'mailpit',
      MAIL_URL: 'http://127.0.0.1:9',
      MAIL_RETRY_BASE_MS: '60000',
      MAIL_RETRY_MAX_MS: '60000',
    });
    await polls(p, 1);
    // Both of frank's photos are stored before the processor's next poll sees him (a poll between them: 1 face).
    gated.hold();
    await uploadImage(api.url, 'frank', await readTestImage('faces/grace_hopper.jpg'));
    await uploadImage(api.url, 'frank', await readTestImage('faces/grace_hopper.jpg'), 'b.jpg');
    gated.release();
    const queue = path.join(data, 'processor/queue/cv.face.detections');
    const [file] = await waitFor('the event on the queue', async () => {
      const names = (await fs.readdir(queue)).filter((n) => n.endsWith('.json'));
      return names.length ? names : null;
    });
    const message = JSON.parse(await fs.readFile(path.join(queue, file!), 'utf8'));
    expect(message.key).toBe('frank');
    expect(message.headers.event_id).toMatch(/^[0-9a-f-]{36}$/);
    const event = JSON.parse(message.value);
    expect(Object.keys(event).sort()).toEqual([
      'camera_id',
      'detection_method',
      'event_type',
      'face_count',
      'person_name',
      'source',
      'timestamp',
    ]);
    expect(personRegisteredEvent.parse(event)).toEqual(event);
    expect(event).toMatchObject({
      event_type: 'person_registered',
      person_name: 'frank',
      face_count: 2,
      detection_method: 'local',
      camera_id: 'gate-1',
      source: 'lookout-processor',
    });
    expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
  });

  it('mails ML operations on the first model status, when the server goes away and when it is back, not on every poll', async () => {
    const api = await backend();
    const data = await tempDir();
    let model: RunningModelServer = await listenModelServer({ port: 0 });
    const port = model.port;
    await model.server.loaded;
    const p = await processor({
      DATA_DIR: data,
      PROCESSOR_BACKEND_URL: api.url,
      REMOTE_DETECTOR_URL: model.url,
      REMOTE_DETECTOR_TIMEOUT_MS: '1000',
      MAIL_MLOPS_TO: 'mlops@example.test',
    });
    const subjects = async () => (await outbox(data)).map((m) => headerOf(m.raw, 'Subject'));
    await waitFor('the first status mail', async () => (await subjects()).length === 1);
    await polls(p, 3);
    expect(await subjects()).toHaveLength(1);
    expect((await subjects())[0]).toContain('AVAILABLE');

    await model.close();
    await waitFor('the unreachable mail', async () => (await subjects()).length === 2);
    await polls(p, 3);
    model = await listenModelServer({ port });
    cleanup.push(() => model.close());
    await model.server.loaded;
    await waitFor('the back mail', async () => (await subjects()).some((s) => /back/i.test(s)));
    await polls(p, 3);
    const all = await subjects();
    expect(all.filter((s) => /unreachable/i.test(s))).toHaveLength(1);
    expect(all.filter((s) => /back/i.test(s))).toHaveLength(1);
    const ready = await p.ready();
    expect(ready.polls.remote).toMatchObject({ ok: true, state: 'AVAILABLE' });
    expect(ready.mail.unchanged_skipped).toBeGreaterThan(3);
    expect((await outbox(data)).every((m) => headerOf(m.raw, 'To').includes('mlops@example.test'))).toBe(true);
  });

  it('mails over SMTP with STARTTLS, trusting the private CA of MAIL_SMTP_CA_FILE', async () => {
    const api = await backend();
    const cert = await generateSelfSignedCert();
    cleanup.push(() => fs.rm(cert.dir, { recursive: true, force: true }));
    const smtp = await startSmtpSink({ tls: { key: cert.key, cert: cert.cert } });
    cleanup.push(() => smtp.close());
    const data = await tempDir();
    const p = await processor({
      DATA_DIR: data,
      PROCESSOR_BACKEND_URL: api.url,
      MAIL_TRANSPORT: 'smtp',
      MAIL_SMTP_URL: `smtp://${SINK_USER}:${SINK_PASS}@127.0.0.1:${smtp.port}`,
      MAIL_SMTP_CA_FILE: path.join(cert.dir, 'cert.pem'),
    });
    await polls(p, 1);
    await uploadImage(api.url, 'wendy', await readTestImage('faces/grace_hopper.jpg'));
    await waitFor('the SMTP mail', () => smtp.messages.length === 1);
    // The sink has the message once DATA ends; the processor counts it only when the server's 250 reaches it.
    await waitFor('the mail counted as sent', async () => (await p.ready()).mail.sent === 1);
    expect(smtp.messages[0]).toMatchObject({ secure: true, user: SINK_USER, to: ['security@localhost'] });
    expect(smtp.messages[0]!.raw).toContain('wendy');
    expect((await p.ready()).mail).toMatchObject({ transport: 'smtp', sent: 1, target: `smtp://127.0.0.1:${smtp.port}` });
  });
});
