/**
 * The processor as `npm run processor` runs it (dist/ build, a real process that can be killed), on a real
 * Kafka-protocol broker: librdkafka's mock cluster of 3 brokers through Debian's kcat. The backend is the real
 * Lookout server, the remote model server is `npm run model-server`, the mail sink Mailpit's API (a test double:
 * Mailpit cannot run here) or a real SMTP server (smtp-server).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { personRegisteredEvent, remoteModelStatusEvent } from '../../shared/events/face-events.js';
import { type KafkaMock, kcatAvailable, readTopic, startKafkaMock } from '../helpers/kafka-mock.js';
import { type MailpitDouble, startMailpitDouble } from '../helpers/mailpit-double.js';
import { freePort, type SpawnedProcessor, spawnProcessor, startBackend, tempDir, waitFor } from '../helpers/processor-harness.js';
import { SINK_PASS, SINK_USER, startSmtpSink } from '../helpers/smtp-sink.js';
import { REPO_ROOT, readTestImage, type TestServer, uploadImage } from '../helpers/test-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => {});
});

beforeAll(() => {
  if (!kcatAvailable()) throw new Error('kcat is not installed (apt-get install kcat): it runs the Kafka mock cluster these tests need');
});

let face: Buffer;
beforeAll(async () => {
  face = await readTestImage('faces/grace_hopper.jpg');
});

async function kafka(): Promise<KafkaMock> {
  const k = await startKafkaMock(3);
  cleanup.push(() => k.stop());
  return k;
}

async function backend(): Promise<TestServer> {
  const server = await startBackend();
  cleanup.push(() => server.close());
  return server;
}

async function mailpit(): Promise<MailpitDouble> {
  const m = await startMailpitDouble();
  cleanup.push(() => m.close());
  return m;
}

async function processor(env: Record<string, string>): Promise<SpawnedProcessor> {
  const p = await spawnProcessor(env);
  cleanup.push(() => p.stop());
  return p;
}

/** The environment of a processor on `k`, polling `api`, mailing to `sink`. */
function envFor(k: KafkaMock, api: TestServer, stateDir: string, sink: MailpitDouble, extra: Record<string, string> = {}) {
  return {
    KAFKA_BROKERS: k.bootstrap,
    PROCESSOR_BACKEND_URL: api.url,
    DATA_DIR: stateDir,
    MAIL_TRANSPORT: 'mailpit',
    MAIL_URL: sink.url,
    ...extra,
  };
}

async function polling(p: SpawnedProcessor): Promise<void> {
  await waitFor(
    'the processor to poll',
    async () => {
      const r = await p.ready();
      return r?.role === 'polling' && r.polls.labels.ok === true;
    },
    40_000,
  );
}

const subjects = (sink: MailpitDouble) => sink.messages.map((m) => m.Subject ?? '');

// Group joins and session expiries on the mock cluster take seconds each; a test here restarts processors several times.
describe('processor on Kafka (3-broker mock cluster)', { timeout: 180_000 }, () => {
  it('a new label gives exactly one event with every spec field, and exactly one mail naming the person', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const p = await processor(envFor(k, api, await tempDir(), sink, { PROCESSOR_CAMERA_ID: 'lobby' }));
    await polling(p);
    await uploadImage(api.url, 'grace', face);
    await waitFor('the mail', () => sink.messages.length === 1, 30_000);

    const records = await readTopic(k.bootstrap, 'cv.face.detections', 2);
    expect(records).toHaveLength(1);
    expect(records[0]!.key).toBe('grace');
    const event = JSON.parse(records[0]!.value);
    expect(Object.keys(event).sort()).toEqual([
      'camera_id',
      'detection_method',
      'event_type',
      'face_count',
      'person_name',
      'source',
      'timestamp',
    ]);
    expect(personRegisteredEvent.parse(event)).toMatchObject({
      person_name: 'grace',
      face_count: 1,
      detection_method: 'local',
      camera_id: 'lobby',
    });
    expect(records[0]!.headers.event_id).toBeTruthy();

    await new Promise((r) => setTimeout(r, 1500));
    expect(sink.messages).toHaveLength(1);
    expect(sink.messages[0]!.Subject).toContain('grace');
    expect(sink.messages[0]!.To[0]!.Email).toBe('security@localhost');
    const ready = await p.ready();
    expect(ready).toMatchObject({
      status: 'ready',
      role: 'polling',
      broker: { kind: 'kafka', connected: true, group_id: 'lookout-processor' },
    });
    expect(ready!.broker.brokers).toHaveLength(3);
  });

  it('mails once when the processor is killed between the mail and the commit, and once after a restart', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const state = await tempDir();
    const env = envFor(k, api, state, sink);
    const first = await processor({ ...env, PROCESSOR_EXIT_AFTER_MAILS: '1' });
    await polling(first);
    await uploadImage(api.url, 'heidi', face);
    expect(await first.exited).toBe(70);
    expect(sink.messages).toHaveLength(1);

    // The offset was not committed: the restarted processor gets the event again and finds it in the ledger.
    const second = await processor(env);
    await waitFor('the redelivered event to be skipped', async () => (await second.ready())?.mail.duplicates_skipped === 1, 40_000);
    await uploadImage(api.url, 'ivan', face);
    await waitFor('the next mail', () => sink.messages.length === 2, 30_000);
    expect(subjects(sink).filter((s) => s.includes('heidi'))).toHaveLength(1);

    // A clean restart: nothing announced or mailed twice.
    await second.stop();
    const third = await processor(env);
    await polling(third);
    await new Promise((r) => setTimeout(r, 1500));
    expect(sink.messages).toHaveLength(2);
  });

  it('retries a mail sink that is down and delivers once it is back', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const p = await processor(envFor(k, api, await tempDir(), sink));
    await polling(p);
    sink.setDown(true);
    await uploadImage(api.url, 'judy', face);
    await waitFor('failed tries', async () => ((await p.ready())?.mail.failed_attempts ?? 0) >= 3, 30_000);
    expect(sink.messages).toHaveLength(0);
    sink.setDown(false);
    await waitFor('the mail after recovery', () => sink.messages.length === 1, 30_000);
    expect(sink.messages[0]!.Subject).toContain('judy');
    // The sink holds the mail before its answer reaches the processor, which counts it then.
    await waitFor('the mail counted as sent', async () => (await p.ready())?.mail.sent === 1);
    expect((await p.ready())!.mail).toMatchObject({ sent: 1, dead_lettered: 0 });
  });

  it('dead-letters an event after MAIL_MAX_ATTEMPTS, with the error, and goes on', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const p = await processor(envFor(k, api, await tempDir(), sink, { MAIL_MAX_ATTEMPTS: '3' }));
    await polling(p);
    sink.setDown(true);
    await uploadImage(api.url, 'kim', face);
    await waitFor('the dead letter', async () => (await p.ready())?.mail.dead_lettered === 1, 30_000);
    const [letter] = await readTopic(k.bootstrap, 'dlq.face-notifications', 1);
    const body = JSON.parse(letter!.value);
    expect(body).toMatchObject({
      attempts: 3,
      event: { event_type: 'person_registered', person_name: 'kim' },
      origin: { topic: 'cv.face.detections' },
    });
    expect(body.error).toMatch(/503/);
    sink.setDown(false);
    await uploadImage(api.url, 'leo', face);
    await waitFor('the next mail', () => sink.messages.length === 1, 30_000);
    expect(sink.messages[0]!.Subject).toContain('leo');
  });

  it('announces a label registered while the broker was down once it is back', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const p = await processor(envFor(k, api, await tempDir(), sink));
    await polling(p);
    k.pause();
    try {
      await uploadImage(api.url, 'mallory', face);
      await waitFor('a poll that could not publish', async () => (await p.ready())?.polls.labels.pending === 1, 40_000);
    } finally {
      k.resume();
    }
    await waitFor('the mail after the broker is back', () => sink.messages.length >= 1, 60_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(subjects(sink).filter((s) => s.includes('mallory'))).toHaveLength(1);
    expect((await p.ready())!.polls.labels).toMatchObject({ pending: 0, ok: true });
  });

  it('two processors in one group: one polls, the other stands by, and every event is mailed once', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const state = await tempDir();
    const a = await processor(envFor(k, api, state, sink));
    const b = await processor(envFor(k, api, state, sink));
    const roles = await waitFor(
      'one poller and one stand-by',
      async () => {
        const r = [(await a.ready())?.role, (await b.ready())?.role].sort();
        return r[0] === 'polling' && r[1] === 'standby' ? r : null;
      },
      40_000,
    );
    expect(roles).toEqual(['polling', 'standby']);
    // Its first poll records the labels already there silently: upload only after it, or a slow first poll (the
    // API's database still opening) takes the new people for old ones and mails nobody.
    await polling((await a.ready())?.role === 'polling' ? a : b);
    const names = ['ned', 'olga', 'pat', 'quinn', 'rita', 'sam', 'tess', 'uma'];
    for (const n of names) await uploadImage(api.url, n, face);
    // Eight uploads, each checked (photo check) and polled, on a loaded two-core machine: time enough, not a latency check.
    await waitFor('every mail', () => sink.messages.length >= names.length, 120_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(subjects(sink).sort()).toEqual(names.map((n) => expect.stringContaining(n)).sort() as unknown as string[]);
    expect(sink.messages).toHaveLength(names.length);
    const consumed = [(await a.ready())!.queue.consumed, (await b.ready())!.queue.consumed];
    expect(consumed[0]! + consumed[1]!).toBe(names.length);
    const records = await readTopic(k.bootstrap, 'cv.face.detections', names.length + 1);
    expect(records).toHaveLength(names.length);
  }, 240_000);

  it('mails "unreachable" once when npm run model-server stops and "back" once when it returns', async () => {
    const [k, api, sink] = await Promise.all([kafka(), backend(), mailpit()]);
    const port = await freePort();
    const startModelServer = async (): Promise<ChildProcess> => {
      const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist/server/model-server/main.js')], {
        env: { PATH: process.env.PATH, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
        stdio: 'ignore',
      });
      cleanup.push(async () => child.kill('SIGKILL'));
      await waitFor(
        'the model server',
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${port}/v2/models/face-detection-retail-0005/ready`)).ok;
          } catch {
            return false;
          }
        },
        60_000,
      );
      return child;
    };
    let model = await startModelServer();
    const p = await processor(
      envFor(k, api, await tempDir(), sink, { REMOTE_DETECTOR_URL: `http://127.0.0.1:${port}`, REMOTE_DETECTOR_TIMEOUT_MS: '1000' }),
    );
    await waitFor('the first status mail', () => sink.messages.length === 1, 40_000);
    expect(sink.messages[0]!.To[0]!.Email).toBe('mlops@localhost');
    const [status] = await readTopic(k.bootstrap, 'cv.face.detections', 1);
    expect(status!.key).toBe('face-detection-retail-0005');
    const event = remoteModelStatusEvent.parse(JSON.parse(status!.value));
    expect(Object.keys(JSON.parse(status!.value)).sort()).toEqual([
      'camera_id',
      'event_type',
      'model_name',
      'model_server',
      'remote_response',
      'source',
      'timestamp',
    ]);
    expect(event.remote_response).toMatchObject({ 'face-detection-retail-0005': { model_version_status: [{ state: 'AVAILABLE' }] } });

    model.kill('SIGTERM');
    await waitFor('the unreachable mail', () => subjects(sink).some((s) => /unreachable/i.test(s)), 30_000);
    const down = await readTopic(k.bootstrap, 'cv.face.detections', 1000);
    const unreachable = down.map((r) => JSON.parse(r.value)).find((e) => e.reachable === false);
    expect(unreachable).toMatchObject({ event_type: 'remote_model_status', remote_response: {}, reachable: false });
    model = await startModelServer();
    await waitFor('the back mail', () => subjects(sink).some((s) => /back/i.test(s)), 30_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(subjects(sink).filter((s) => /unreachable/i.test(s))).toHaveLength(1);
    expect(subjects(sink).filter((s) => /back/i.test(s))).toHaveLength(1);
    expect(sink.messages.every((m) => m.To[0]!.Email === 'mlops@localhost')).toBe(true);
    await waitFor('the remote poll to see the model again', async () => (await p.ready())?.polls.remote?.state === 'AVAILABLE');
    expect((await p.ready())!.polls.remote).toMatchObject({ ok: true, error: null });
    model.kill('SIGTERM');
  });

  it('delivers over SMTP to a real SMTP server with authentication, the password never in the logs', async () => {
    const [k, api, smtp] = await Promise.all([kafka(), backend(), startSmtpSink()]);
    cleanup.push(() => smtp.close());
    const p = await processor({
      KAFKA_BROKERS: k.bootstrap,
      PROCESSOR_BACKEND_URL: api.url,
      DATA_DIR: await tempDir(),
      MAIL_TRANSPORT: 'smtp',
      MAIL_SMTP_URL: `smtp://${SINK_USER}:${SINK_PASS}@127.0.0.1:${smtp.port}`,
      MAIL_SECURITY_TO: 'Security Team <security@example.test>',
      LOG_LEVEL: 'debug',
    });
    await polling(p);
    await uploadImage(api.url, 'victor', face);
    await waitFor('the SMTP mail', () => smtp.messages.length === 1, 30_000);
    expect(smtp.messages[0]!.to).toEqual(['security@example.test']);
    expect(smtp.messages[0]!.user).toBe(SINK_USER);
    expect(smtp.messages[0]!.raw).toContain('victor');
    const ready = await p.ready();
    expect(ready!.mail.target).not.toContain(SINK_PASS);
    expect(JSON.stringify(ready)).not.toContain(SINK_PASS);
    expect(p.output()).not.toContain(SINK_PASS);
  });

  it('keeps the SASL password out of its logs and answers when the brokers refuse it', async () => {
    const [k, api] = await Promise.all([kafka(), backend()]);
    const secret = 'k4fka-Secr3t-value';
    const p = await processor({
      KAFKA_BROKERS: k.bootstrap,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_USERNAME: 'lookout',
      KAFKA_PASSWORD: secret,
      PROCESSOR_BACKEND_URL: api.url,
      DATA_DIR: await tempDir(),
      LOG_LEVEL: 'debug',
    });
    // The mock cluster has no such user (or no SASL at all): the processor keeps trying, not ready, and says why.
    await waitFor('a failed connection in the log', () => /cannot reach Kafka/.test(p.output()), 30_000);
    const ready = await p.ready();
    expect(ready).toMatchObject({ status: 'not_ready', broker: { connected: false }, role: 'stopped' });
    expect(JSON.stringify(ready)).not.toContain(secret);
    expect(p.output()).not.toContain(secret);
  });
});
