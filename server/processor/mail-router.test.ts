import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EVENT_ID_HEADER } from '../../shared/events/face-events.js';
import type { Logger } from '../logger.js';
import type { BusState, EventBus, IncomingMessage, MessageHandler, OutgoingMessage } from './bus/types.js';
import { createFileTransport } from './mail/file-transport.js';
import { MailError, type MailMessage, type MailTransport } from './mail/types.js';
import { backoffMs, MailRouter, type MailRouterOptions, type ModelStatesDoc } from './mail-router.js';
import { JsonState } from './state/json-state.js';
import { MailLedger } from './state/mail-ledger.js';
import { ProcessorStats } from './stats.js';

describe('backoffMs', () => {
  it('doubles from the base after each failed try, capped at the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((a) => backoffMs(a, 1000, 60_000))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000,
    ]);
    expect(backoffMs(1, 100, 400)).toBe(100);
    expect(backoffMs(3, 100, 400)).toBe(400);
    expect(backoffMs(1000, 1, 3_600_000)).toBe(3_600_000);
    expect(Number.isFinite(backoffMs(10_000, 1000, 60_000))).toBe(true);
  });
});

/** An in-memory EventBus: records what is published, never consumes. */
class RecordingBus implements EventBus {
  readonly published: { topic: string; message: OutgoingMessage }[] = [];
  async connect(): Promise<void> {}
  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    for (const message of messages) this.published.push({ topic, message });
  }
  async consume(_topic: string, _handler: MessageHandler): Promise<void> {}
  onLeadership(_listener: (leader: boolean) => void): void {}
  state(): BusState {
    return { kind: 'in-process', connected: true, brokers: [], lag: 0 };
  }
  async disconnect(): Promise<void> {}
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const heartbeat = { heartbeat: async () => {} };
const TOPIC = 'cv.face.detections';
const DLQ = 'dlq.face-notifications';

let dir: string;
let outboxDir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-router-'));
  outboxDir = path.join(dir, 'outbox');
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

interface Harness {
  router: MailRouter;
  bus: RecordingBus;
  stats: ProcessorStats;
  modelStates: JsonState<ModelStatesDoc>;
  send(value: string | object, eventId?: string): Promise<void>;
  mails(): Promise<string[]>;
}

let offset = 0;

async function harness(over: Partial<MailRouterOptions> = {}, transport: MailTransport = createFileTransport(outboxDir)): Promise<Harness> {
  const bus = new RecordingBus();
  const stats = new ProcessorStats();
  const ledger = new MailLedger(path.join(dir, 'ledger'));
  const modelStates = new JsonState<ModelStatesDoc>(path.join(dir, 'model-states.json'), () => ({}));
  await Promise.all([ledger.open(), modelStates.load()]);
  const router = new MailRouter(
    {
      from: { email: 'lookout@localhost', name: 'Lookout' },
      securityTo: [{ email: 'security@example.test', name: 'Security' }],
      mlopsTo: [{ email: 'mlops@example.test', name: '' }],
      remoteStatus: 'changes',
      maxAttempts: 3,
      retryBaseMs: 1,
      retryMaxMs: 4,
      dlqTopic: DLQ,
      ...over,
    },
    { transport, ledger, modelStates, bus, stats, log: silent },
  );
  return {
    router,
    bus,
    stats,
    modelStates,
    async send(value, eventId) {
      const message: IncomingMessage = {
        topic: TOPIC,
        partition: 0,
        offset: String(offset++),
        key: 'k',
        value: typeof value === 'string' ? value : JSON.stringify(value),
        headers: eventId === undefined ? {} : { [EVENT_ID_HEADER]: eventId },
      };
      await router.handle(message, heartbeat);
    },
    async mails() {
      const names = (await fs.readdir(outboxDir).catch(() => [] as string[]))
        .filter((n) => n.endsWith('.eml') && !n.startsWith('.'))
        .sort();
      return Promise.all(names.map((n) => fs.readFile(path.join(outboxDir, n), 'utf8')));
    },
  };
}

const registered = (person: string) => ({
  event_type: 'person_registered',
  timestamp: '2025-03-04T05:06:07.890Z',
  source: 'lookout-processor',
  camera_id: 'default',
  person_name: person,
  face_count: 1,
  detection_method: 'local',
});

const modelStatus = (state: string | null, at = '2025-03-04T05:06:07.890Z') => ({
  event_type: 'remote_model_status',
  timestamp: at,
  source: 'lookout-processor',
  camera_id: 'default',
  model_name: 'face-detection',
  model_server: 'http://models.example.test:8000',
  remote_response: state === null ? {} : { 'face-detection': { model_version_status: [{ version: '1', state }] } },
  ...(state === null ? { reachable: false } : {}),
});

describe('MailRouter', () => {
  it('mails a person_registered event to security as one .eml', async () => {
    const h = await harness();
    await h.send(registered('alice'), 'evt-alice');
    const mails = await h.mails();
    expect(mails).toHaveLength(1);
    expect(mails[0]).toMatch(/^To: .*security@example\.test/m);
    expect(mails[0]).toContain('alice');
    expect(h.stats).toMatchObject({ consumed: 1, mailsSent: 1, duplicatesSkipped: 0, deadLettered: 0 });
    expect(h.stats.lastSentAt).not.toBeNull();
    expect(h.bus.published).toEqual([]);
  });

  it('mails an event id once: the second delivery is a skipped duplicate', async () => {
    const h = await harness();
    await h.send(registered('bob'), 'evt-bob');
    await h.send(registered('bob'), 'evt-bob');
    expect(await h.mails()).toHaveLength(1);
    expect(h.stats).toMatchObject({ consumed: 2, mailsSent: 1, duplicatesSkipped: 1 });
  });

  it('keys a message without an event id header on its content', async () => {
    const h = await harness();
    await h.send(registered('carol'));
    await h.send(registered('carol'));
    await h.send(registered('dave'));
    expect(await h.mails()).toHaveLength(2);
    expect(h.stats.duplicatesSkipped).toBe(1);
  });

  it('sends a message that is not JSON to the dead-letter topic with the error, and mails nothing', async () => {
    const h = await harness();
    await h.send('{"event_type": "person_registered",', 'evt-broken');
    expect(await h.mails()).toEqual([]);
    expect(h.bus.published).toHaveLength(1);
    const { topic, message } = h.bus.published[0]!;
    expect(topic).toBe(DLQ);
    expect(message.headers[EVENT_ID_HEADER]).toBe('evt-broken');
    const letter = JSON.parse(message.value);
    expect(letter).toMatchObject({
      event_id: 'evt-broken',
      error: 'the message is not JSON',
      attempts: 0,
      origin: { topic: TOPIC, partition: 0, key: 'k' },
      event: '{"event_type": "person_registered",',
    });
    expect(h.stats).toMatchObject({ invalid: 1, deadLettered: 1, mailsSent: 0 });
    // Settled: a redelivery is a duplicate, not a second dead letter.
    await h.send('{"event_type": "person_registered",', 'evt-broken');
    expect(h.bus.published).toHaveLength(1);
  });

  it('sends an event of a known type that breaks its schema to the dead-letter topic, saying which field', async () => {
    const h = await harness();
    await h.send({ ...registered('erin'), face_count: 'two' }, 'evt-bad-field');
    expect(await h.mails()).toEqual([]);
    const letter = JSON.parse(h.bus.published[0]!.message.value);
    expect(letter.error).toMatch(/^invalid person_registered event: face_count: /);
    expect(letter.event.person_name).toBe('erin');
  });

  it('skips an event of an unknown type: no mail, nothing published', async () => {
    const h = await harness();
    await h.send({ ...registered('frank'), event_type: 'face_detected' }, 'evt-unknown');
    await h.send('[1, 2]', 'evt-array');
    await h.send('null', 'evt-null');
    expect(await h.mails()).toEqual([]);
    expect(h.bus.published).toEqual([]);
    expect(h.stats).toMatchObject({ consumed: 3, unknownSkipped: 3, invalid: 0, deadLettered: 0 });
  });

  it('mails a remote model status only when its state changed (MAIL_REMOTE_STATUS=changes), remembering it on disk', async () => {
    const h = await harness({ remoteStatus: 'changes' });
    await h.send(modelStatus('AVAILABLE', '2025-03-04T05:00:00.000Z'), 's-1');
    await h.send(modelStatus('AVAILABLE', '2025-03-04T05:01:00.000Z'), 's-2');
    await h.send(modelStatus('AVAILABLE', '2025-03-04T05:02:00.000Z'), 's-3');
    expect(await h.mails()).toHaveLength(1);
    expect(h.stats).toMatchObject({ mailsSent: 1, unchangedSkipped: 2 });
    expect(h.modelStates.current).toEqual({ 'face-detection': 'AVAILABLE' });
    await h.send(modelStatus(null, '2025-03-04T05:03:00.000Z'), 's-4');
    await h.send(modelStatus('AVAILABLE', '2025-03-04T05:04:00.000Z'), 's-5');
    const mails = await h.mails();
    expect(mails).toHaveLength(3);
    expect(mails.every((m) => /^To: .*mlops@example\.test/m.test(m))).toBe(true);
    expect(JSON.parse(await fs.readFile(path.join(dir, 'model-states.json'), 'utf8'))).toEqual({ 'face-detection': 'AVAILABLE' });
  });

  it('mails every remote model status with MAIL_REMOTE_STATUS=every', async () => {
    const h = await harness({ remoteStatus: 'every' });
    for (let i = 0; i < 3; i++) await h.send(modelStatus('AVAILABLE', `2025-03-04T05:0${i}:00.000Z`), `e-${i}`);
    expect(await h.mails()).toHaveLength(3);
    expect(h.stats).toMatchObject({ mailsSent: 3, unchangedSkipped: 0 });
  });

  it('retries a failing sink, then dead-letters the event with the last error after the last try', async () => {
    const tries: string[] = [];
    const failing: MailTransport = {
      kind: 'test',
      target: 'nowhere',
      async send(m: MailMessage) {
        tries.push(m.eventId);
        throw new MailError(`sink down (try ${tries.length})`);
      },
      async close() {},
    };
    const h = await harness({ maxAttempts: 3 }, failing);
    await h.send(registered('gina'), 'evt-gina');
    expect(tries).toEqual(['evt-gina', 'evt-gina', 'evt-gina']);
    const letter = JSON.parse(h.bus.published[0]!.message.value);
    expect(letter).toMatchObject({ event_id: 'evt-gina', attempts: 3, error: expect.stringContaining('sink down (try 3)') });
    expect(h.stats).toMatchObject({ mailFailedAttempts: 3, deadLettered: 1, mailsSent: 0 });
  });

  it('dead-letters at once when the sink refuses for good, and mails after a passing failure', async () => {
    let calls = 0;
    const file = createFileTransport(outboxDir);
    const flaky: MailTransport = {
      kind: 'test',
      target: outboxDir,
      async send(m: MailMessage) {
        calls++;
        if (m.eventId === 'evt-refused') throw new MailError('550 no such user', true);
        if (calls === 2) throw new MailError('421 try again later');
        return file.send(m);
      },
      close: () => file.close(),
    };
    const h = await harness({ maxAttempts: 5 }, flaky);
    await h.send(registered('hank'), 'evt-refused');
    expect(calls).toBe(1);
    expect(JSON.parse(h.bus.published[0]!.message.value)).toMatchObject({ attempts: 1, error: expect.stringContaining('550') });
    await h.send(registered('ivy'), 'evt-ivy');
    expect(calls).toBe(3);
    expect(await h.mails()).toHaveLength(1);
    expect(h.stats).toMatchObject({ mailsSent: 1, mailFailedAttempts: 2, deadLettered: 1 });
  });
});
