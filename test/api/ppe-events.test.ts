/**
 * PPE events on Kafka, end to end: the API server publishes every check as `ppe_compliance_check` to
 * cv.ppe.detections and every failed stage as `ppe_processing_failed` to dlq.ppe-errors, read back here from a
 * real Kafka-protocol broker (librdkafka's mock cluster of 3 brokers through kcat). The PPE detector and the LLM
 * are TEST DOUBLES (test/helpers/ppe-detector-double.ts, openai-double.ts).
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ppeComplianceCheckEvent, ppeProcessingFailedEvent } from '../../shared/events/ppe-events.js';
import { base64 } from '../helpers/faces.js';
import { type KafkaMock, kcatAvailable, readTopic, startKafkaMock } from '../helpers/kafka-mock.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { type PpeDetectorDouble, type PpeScene, startPpeDetectorDouble } from '../helpers/ppe-detector-double.js';
import { getJson, postJson, readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';

const PHOTO = 'faces/grace_hopper.jpg';
/** The spec's fields of `ppe_compliance_check`, plus `persons`: exactly these. */
const CHECK_FIELDS = [
  'event_type',
  'source',
  'timestamp',
  'ppe_status',
  'person_count',
  'expected_ppe',
  'present_ppe',
  'missing_ppe',
  'detections',
  'llm_analysis',
  'persons',
];
const LETTER_FIELDS = ['event_type', 'timestamp', 'stage', 'error', 'request', 'attempt'];

let kafka: KafkaMock;
/** The mock's stop() waits for an exit that already happened when called twice (a killed child's exitCode stays null). */
let kafkaStopped = false;
let detector: PpeDetectorDouble;
let llm: OpenAIDouble;
let server: TestServer;
let bytes: Buffer;
let size: { width: number; height: number };

beforeAll(async () => {
  if (!kcatAvailable()) throw new Error('kcat is not installed (apt-get install kcat): it runs the Kafka mock cluster these tests need');
  kafka = await startKafkaMock(3);
  detector = await startPpeDetectorDouble({ delayMs: 3000 });
  llm = await startOpenAIDouble({ reply: 'The second worker must put on a hardhat, goggles and a vest before going on.' });
  server = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
    KAFKA_BROKERS: kafka.bootstrap,
    KAFKA_REQUEST_TIMEOUT_MS: '3000',
    PPE_ENABLED: 'true',
    PPE_ENDPOINT: detector.url,
    PPE_TIMEOUT_MS: '1000',
    PPE_LLM_TIMEOUT_MS: '2000',
    CHAT_ENDPOINT: llm.url,
    CHAT_MODEL: 'double-model',
  });
  bytes = await readTestImage(PHOTO);
  const meta = await sharp(bytes).metadata();
  size = { width: meta.width!, height: meta.height! };
});

afterAll(async () => {
  await server?.close();
  await detector?.close();
  await llm?.close();
  if (!kafkaStopped) await kafka?.stop();
});

async function check(scene: PpeScene) {
  detector.scene = scene;
  return postJson(`${server.url}/api/ppe/detect`, { image: base64(bytes) });
}

describe('PPE events on Kafka', () => {
  it('says where the events go', async () => {
    const { body } = await getJson(`${server.url}/api/ppe/status`);
    expect(body.events).toEqual({
      sink: 'kafka',
      topic: 'cv.ppe.detections',
      dlq_topic: 'dlq.ppe-errors',
      dead_letters: 'kafka topic dlq.ppe-errors',
    });
  });

  it('publishes every check with exactly the spec fields, keyed by its id', { timeout: 120_000 }, async () => {
    const compliant = await check('equipped');
    const violation = await check('two-persons-one-equipped');
    expect([compliant.status, violation.status]).toEqual([200, 200]);
    expect(violation.body.llm_analysis).toBe(llm.reply);

    const records = await readTopic(kafka.bootstrap, 'cv.ppe.detections', 2);
    expect(records).toHaveLength(2);
    const byId = new Map(records.map((r) => [r.key, r]));
    for (const [res, scene] of [
      [compliant, 'equipped'],
      [violation, 'two-persons-one-equipped'],
    ] as const) {
      const record = byId.get(res.body.id)!;
      expect(record, `the event of check ${res.body.id}`).toBeDefined();
      expect(record.headers.event_id).toBe(res.body.id);
      const event = JSON.parse(record.value);
      expect(Object.keys(event).sort()).toEqual([...CHECK_FIELDS].sort());
      const parsed = ppeComplianceCheckEvent.strict().safeParse(event);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expect(event).toMatchObject({
        event_type: 'ppe_compliance_check',
        source: 'lookout-api',
        timestamp: res.body.timestamp,
        ppe_status: res.body.ppe_status,
        person_count: res.body.person_count,
        expected_ppe: ['hardhat', 'safety-vest', 'goggles'],
        present_ppe: res.body.present_ppe,
        missing_ppe: res.body.missing_ppe,
        persons: res.body.persons,
        llm_analysis: res.body.llm_analysis ?? '',
      });
      expect(typeof event.llm_analysis).toBe('string');
      expect(event.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The detector's boxes, in pixels of the frame, with class and confidence as it sent them.
      expect(event.detections).toEqual(
        detector
          .detectionsFor(scene, size.width, size.height)
          .map((d) => ({ class_name: d.class_name, confidence: d.confidence, bbox: d.bbox })),
      );
      for (const d of event.detections) expect(Object.keys(d).sort()).toEqual(['bbox', 'class_name', 'confidence']);
    }
    expect(JSON.parse(byId.get(compliant.body.id)!.value).llm_analysis).toBe('');
    expect(JSON.parse(byId.get(violation.body.id)!.value).llm_analysis).toBe(llm.reply);

    // The history holds the same events, with their ids.
    const history = (await getJson(`${server.url}/api/ppe/events`)).body.events;
    for (const e of history)
      expect(JSON.parse(byId.get(e.id)!.value)).toEqual(Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'id')));
  });

  it('dead-letters a detector error (502), a timeout (504) and an LLM failure (200 without analysis)', { timeout: 120_000 }, async () => {
    const failed = await check('error');
    expect(failed.status).toBe(502);
    expect(failed.body.error.code).toBe('ppe_detector_failed');
    const slow = await check('slow');
    expect(slow.status).toBe(504);
    expect(slow.body.error.code).toBe('ppe_detector_timeout');
    llm.mode = 'error500';
    try {
      const noAnalysis = await check('no-hardhat');
      expect(noAnalysis.status).toBe(200);
      expect(noAnalysis.body).toMatchObject({ ppe_status: 'violation', llm_analysis: null });
    } finally {
      llm.mode = 'ok';
    }

    const letters = (await readTopic(kafka.bootstrap, 'dlq.ppe-errors', 3)).map((r) => ({ record: r, letter: JSON.parse(r.value) }));
    expect(letters).toHaveLength(3);
    const sha = createHash('sha256').update(bytes).digest('hex');
    for (const { record, letter } of letters) {
      expect(Object.keys(letter).sort()).toEqual([...LETTER_FIELDS].sort());
      const parsed = ppeProcessingFailedEvent.strict().safeParse(letter);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expect(Object.keys(letter.request).sort()).toEqual(['confidence', 'height', 'image_sha256', 'width']);
      expect(letter.request).toEqual({ image_sha256: sha, width: size.width, height: size.height, confidence: 0.5 });
      expect(letter.attempt).toBe(1);
      expect(record.key).toMatch(/^[0-9a-f-]{36}$/);
      expect(record.headers.event_id).toMatch(/^[0-9a-f-]{36}$/);
    }
    const summary = letters.map(({ letter }) => `${letter.stage}:${letter.error.code}`).sort();
    expect(summary).toEqual(['detector:ppe_detector_failed', 'detector:ppe_detector_timeout', 'llm:llm_bad_gateway']);
  });

  it('a broker that is gone never fails a check: it is answered and kept in the history', { timeout: 120_000 }, async () => {
    const publisher = server.service.ctx.ppe.publisher;
    const deadLetter = vi.spyOn(publisher, 'publishDeadLetter');
    await kafka.stop();
    kafkaStopped = true;
    // A check never waits for the broker: with a publish that never ends, the check is still answered (the
    // order of events proves it, not a time measured on a busy machine).
    const hanging = vi.spyOn(publisher, 'publishCheck').mockReturnValueOnce(new Promise<void>(() => {}));
    expect((await check('equipped')).status).toBe(200);
    expect(hanging).toHaveBeenCalledTimes(1);
    hanging.mockRestore();
    const res = await check('equipped');
    expect(res.status).toBe(200);
    const { body } = await getJson(`${server.url}/api/ppe/events?limit=1`);
    expect(body.events[0].id).toBe(res.body.id);
    // The publish fails in the background; a dead letter is then tried (to the same broker: it fails too, and is logged).
    await expect.poll(() => deadLetter.mock.calls.length, { timeout: 30_000 }).toBe(1);
    const [key, letter] = deadLetter.mock.calls[0];
    expect(key).toBe(res.body.id);
    expect(letter).toMatchObject({
      stage: 'publish',
      error: { code: 'publish_failed' },
      request: { width: size.width, height: size.height },
    });
    await expect(deadLetter.mock.results[0].value).rejects.toThrow(/ECONNREFUSED|Connection/);
    deadLetter.mockRestore();
  });
});
