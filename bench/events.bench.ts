/**
 * Event pipeline benchmark (issue #13): 1000 labels appear at once on the real Lookout server; the processor's
 * next poll announces them and its router mails each one. Figure: time from the processor's first poll to the
 * 1000th mail accepted by the sink (Mailpit's send API, played by the test double on 127.0.0.1), and events per
 * second through broker and router; every run also checks that no mail was lost or doubled.
 *
 * Reference, same run, same broker and sink: a bare kafkajs pipeline (one producer send of the 1000 events, a
 * consumer group posting each one to the sink and committing it, 4 partitions at a time), i.e. the floor that
 * broker and sink set without the processor's work (ledger, state, composing the mail, retries).
 * Broker: librdkafka's 3-broker mock cluster through Debian's kcat; without kcat only the in-process row runs.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import sharp from 'sharp';
import { loadProcessorSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';
import { createProcessor } from '../server/processor/processor.js';
import { kcatAvailable, startKafkaMock } from '../test/helpers/kafka-mock.js';
import { type MailpitDouble, startMailpitDouble } from '../test/helpers/mailpit-double.js';
import { startBenchServer, type BenchServer } from './browser.js';
import type { BenchRow } from './types.js';

const LABELS = 1000;

async function waitUntil(what: string, probe: () => boolean, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
  return performance.now();
}

/** Stores one small JPEG for each of `count` labels through the API (8 uploads at a time). */
async function registerLabels(api: BenchServer, prefix: string, count: number): Promise<void> {
  const jpeg = await sharp({ create: { width: 32, height: 32, channels: 3, background: '#808080' } })
    .jpeg()
    .toBuffer();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const form = new FormData();
      form.set('label', `${prefix}-${String(i).padStart(4, '0')}`);
      form.set('file', new Blob([new Uint8Array(jpeg)], { type: 'image/jpeg' }), 'face.jpg');
      const res = await fetch(`${api.url}/api/images`, { method: 'POST', body: form });
      if (!res.ok) throw new Error(`bench: upload ${i} answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

/** No mail lost or doubled: exactly one per label, each label once. */
function checkMails(sink: MailpitDouble, prefix: string, count: number): string {
  const names = sink.messages.map((m) => /\b(\S+-\d{4})\b/.exec(m.Subject ?? '')?.[1]).filter((n) => n?.startsWith(prefix));
  const distinct = new Set(names).size;
  if (sink.messages.length !== count || distinct !== count) {
    throw new Error(`bench: ${sink.messages.length} mails for ${distinct} distinct labels, expected ${count} of each`);
  }
  return `${count} mails, ${distinct} labels, none lost or doubled`;
}

/** The processor: first start on an empty backend, then `LABELS` labels appear, then time its next start's work. */
async function processorRun(
  api: BenchServer,
  sink: MailpitDouble,
  prefix: string,
  env: Record<string, string>,
): Promise<{ ms: number; check: string }> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-bench-events-'));
  const settings = loadProcessorSettings(
    {
      DATA_DIR: dataDir,
      PROCESSOR_BACKEND_URL: api.url,
      PROCESSOR_POLL_INTERVAL_MS: '600000',
      MAIL_TRANSPORT: 'mailpit',
      MAIL_URL: sink.url,
      LOG_LEVEL: 'error',
      ...env,
    },
    process.cwd(),
  );
  try {
    // First start: the (still empty of these labels) backend's labels are recorded, nothing is announced.
    const first = await createProcessor(settings, createLogger('error'), { version: 'bench' });
    void first.start();
    await waitUntil('the first poll', () => first.ready().polls.labels.ok === true, 60_000);
    await first.close();
    await registerLabels(api, prefix, LABELS);
    sink.messages.length = 0;
    const second = await createProcessor(settings, createLogger('error'), { version: 'bench' });
    void second.start();
    // Its first poll starts as it becomes the poller (after joining the group): the clock starts there.
    const t0 = await waitUntil('the poller', () => second.ready().role === 'polling', 60_000);
    const t1 = await waitUntil(`${LABELS} mails`, () => sink.messages.length >= LABELS, 300_000);
    await new Promise((r) => setTimeout(r, 1000));
    await second.close();
    return { ms: t1 - t0, check: checkMails(sink, prefix, LABELS) };
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/** The reference: the same 1000 events through a bare kafkajs producer and consumer group to the same sink. */
async function bareKafkaRun(bootstrap: string, sink: MailpitDouble): Promise<number> {
  const kafka = new Kafka({ clientId: 'bench-bare', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const topic = 'bench.bare';
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  const consumer = kafka.consumer({ groupId: 'bench-bare', sessionTimeout: 10_000 });
  await producer.connect();
  await producer.send({ topic, messages: [{ key: 'warm-up', value: '{}' }] });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: false });
  let joined = false;
  consumer.on(consumer.events.GROUP_JOIN, () => (joined = true));
  let sent = 0;
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: 4,
    eachMessage: async ({ partition, message }) => {
      const event = JSON.parse(message.value!.toString());
      const res = await fetch(`${sink.url}/api/v1/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          From: { Email: 'lookout@localhost', Name: 'Lookout' },
          To: [{ Email: 'security@localhost', Name: '' }],
          Subject: `New person: ${event.person_name}`,
          Text: event.person_name,
          HTML: `<p>${event.person_name}</p>`,
        }),
      });
      if (!res.ok) throw new Error(`sink answered ${res.status}`);
      sent++;
      await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
    },
  });
  await waitUntil('the bare consumer to join', () => joined, 60_000);
  await new Promise((r) => setTimeout(r, 500));
  const messages = Array.from({ length: LABELS }, (_, i) => {
    const person_name = `bare-${String(i).padStart(4, '0')}`;
    return {
      key: person_name,
      value: JSON.stringify({
        event_type: 'person_registered',
        timestamp: new Date().toISOString(),
        source: 'bench',
        person_name,
        face_count: 1,
        detection_method: 'local',
        camera_id: 'bench',
      }),
    };
  });
  const t0 = performance.now();
  await producer.send({ topic, acks: -1, messages });
  const t1 = await waitUntil('the bare pipeline', () => sent >= LABELS, 300_000);
  await consumer.disconnect();
  await producer.disconnect();
  return t1 - t0;
}

export async function benchEvents(repoRoot: string): Promise<BenchRow[]> {
  const api = await startBenchServer(repoRoot, { OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false', WORKERS: '1' });
  const sink = await startMailpitDouble();
  const rows: BenchRow[] = [];
  try {
    const local = await processorRun(api, sink, 'queue', {});
    console.log(`events (in-process queue): ${local.check}`);
    rows.push({
      name: `Event pipeline, ${LABELS} new labels -> ${LABELS} mails accepted, in-process queue (no Kafka), Mailpit API`,
      unit: 'ms',
      lookout: local.ms,
    });
    rows.push({ name: 'same, throughput (poll, queue on disk, router, mail)', unit: 'events/s', lookout: (LABELS * 1000) / local.ms });
    if (!kcatAvailable()) {
      console.log('events: kcat is not installed (apt-get install kcat); the Kafka rows are skipped');
      return rows;
    }
    const broker = await startKafkaMock(3);
    try {
      const bare = await bareKafkaRun(broker.bootstrap, sink);
      sink.messages.length = 0;
      const kafka = await processorRun(api, sink, 'kafka', { KAFKA_BROKERS: broker.bootstrap, KAFKA_SESSION_TIMEOUT_MS: '10000' });
      console.log(`events (Kafka): ${kafka.check}`);
      rows.push({
        name: `Event pipeline, ${LABELS} new labels -> ${LABELS} mails accepted, Kafka (3-broker mock cluster), Mailpit API`,
        unit: 'ms',
        lookout: kafka.ms,
        reference: bare,
        referenceName: 'bare kafkajs produce + consume + POST + commit, same broker and sink',
        ratio: kafka.ms / bare,
      });
      rows.push({
        name: 'same, throughput through broker and router',
        unit: 'events/s',
        lookout: (LABELS * 1000) / kafka.ms,
        reference: (LABELS * 1000) / bare,
        referenceName: 'bare kafkajs pipeline',
        ratio: bare / kafka.ms,
      });
    } finally {
      await broker.stop();
    }
  } finally {
    await sink.close();
    await api.close();
  }
  return rows;
}
