/**
 * PPE compliance over real HTTP (`/api/ppe/*`, `/api/ready`), without Kafka: the checks go to the local history
 * and the dead letters to DATA_DIR/ppe/dead-letters.json. The PPE detector is a TEST DOUBLE (no PPE model exists
 * here: test/helpers/ppe-detector-double.ts) and so is the LLM (test/helpers/openai-double.ts); persons of the
 * `no-person-class` scene come from Lookout's real object detector (NanoDet) on a real photo.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { unzipSync } from 'fflate';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ppeDetectResponse, ppeHistoryRecord } from '../../shared/api/ppe.js';
import { ppeProcessingFailedEvent } from '../../shared/events/ppe-events.js';
import { base64 } from '../helpers/faces.js';
import { startOpenAIDouble, type OpenAIDouble } from '../helpers/openai-double.js';
import { type FracBox, type PpeDetectorDouble, type PpeScene, startPpeDetectorDouble } from '../helpers/ppe-detector-double.js';
import { getJson, postJson, readTestImage, startTestServer, type TestServer } from '../helpers/test-server.js';

const SECRET = 'ppe-secret-42';
const PERSONS_PHOTO = 'objects/basketball1.png';
const EMPTY_PHOTO = 'negatives/brick.png';
const EQUIPPED_PHOTO = 'faces/grace_hopper.jpg';

let detector: PpeDetectorDouble;
let llm: OpenAIDouble;
let server: TestServer;
let datasetDir: string;

async function waitFor(what: string, ok: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  detector = await startPpeDetectorDouble();
  llm = await startOpenAIDouble({ reply: 'Person 2 wears no hardhat, goggles or vest: stop work and equip them.' });
  datasetDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-ppe-dataset-'));
  server = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'false',
    PPE_ENABLED: 'true',
    PPE_ENDPOINT: `http://ppe-user:${SECRET}@127.0.0.1:${detector.port}`,
    PPE_TIMEOUT_MS: '1000',
    PPE_CHECK_INTERVAL_MS: '200',
    PPE_LLM_TIMEOUT_MS: '1000',
    PPE_DATASET_DIR: datasetDir,
    CHAT_ENDPOINT: llm.url,
    CHAT_MODEL: 'double-model',
    CHAT_TIMEOUT_MS: '5000',
    CHAT_CHECK_INTERVAL_MS: '300',
  });
  // The no-person-class scene needs NanoDet: it loads on that first request (#38 2), which waits for it.
  await waitFor('the object detector', async () => (await getJson(`${server.url}/api/objects/status`)).body.available === true);
  await waitFor('the PPE detector check', async () => (await getJson(`${server.url}/api/ppe/status`)).body.reachable === true);
});

afterAll(async () => {
  await server?.close();
  await detector?.close();
  await llm?.close();
  if (datasetDir) await fs.rm(datasetDir, { recursive: true, force: true });
});

/** Ids and responses of the successful checks, in order (for the history and dataset tests). */
const checks: { id: string; scene: PpeScene; photo: string; body: any }[] = [];

async function check(scene: PpeScene, photo = EQUIPPED_PHOTO, extra: Record<string, unknown> = {}, target = server) {
  detector.scene = scene;
  const res = await postJson(`${target.url}/api/ppe/detect`, { image: base64(await readTestImage(photo)), ...extra });
  if (res.status === 200 && target === server) checks.push({ id: res.body.id, scene, photo, body: res.body });
  return res;
}

async function deadLetters(dataDir = server.dataDir): Promise<any[]> {
  try {
    return JSON.parse(await fs.readFile(path.join(dataDir, 'ppe', 'dead-letters.json'), 'utf8')).records;
  } catch {
    return [];
  }
}

function findingsSent(request: { body: unknown }): { text: string; raw: string } {
  const messages = (request.body as { messages: { role: string; content: string }[] }).messages;
  return { text: messages.map((m) => m.content).join('\n'), raw: JSON.stringify(request.body) };
}

const fracOf = (o: { x: number; y: number; w: number; h: number }, width: number, height: number): FracBox => [
  o.x / width,
  o.y / height,
  o.w / width,
  o.h / height,
];

describe('POST /api/ppe/detect: the verdict, person by person', () => {
  it('equipped: one person wearing everything is compliant; the detector got a JPEG, the confidence and the credentials', async () => {
    const llmBefore = llm.completions().length;
    const predictBefore = detector.predictions.length;
    const { status, body } = await check('equipped');
    expect(status).toBe(200);
    expect(ppeDetectResponse.safeParse(body).success).toBe(true);
    const meta = await sharp(await readTestImage(EQUIPPED_PHOTO)).metadata();
    expect([body.width, body.height]).toEqual([meta.width, meta.height]);
    expect(body).toMatchObject({
      ppe_status: 'compliant',
      person_count: 1,
      expected_ppe: ['hardhat', 'safety-vest', 'goggles'],
      present_ppe: ['hardhat', 'safety-vest', 'goggles'],
      missing_ppe: [],
      llm_analysis: null,
      count: 4,
      summary: { Person: 1, Hardhat: 1, Goggles: 1, 'Safety Vest': 1 },
    });
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.persons).toHaveLength(1);
    expect(body.persons[0]).toMatchObject({ status: 'compliant', present: ['hardhat', 'safety-vest', 'goggles'], missing: [] });
    // Every detector box comes back in integer pixels with what the rule made of it.
    const expected = detector.detectionsFor('equipped', body.width, body.height);
    for (const d of expected) {
      const o = body.objects.find((x: any) => x.class_name === d.class_name);
      expect(o).toMatchObject({ source: 'ppe_detector', x: Math.round(d.bbox.x1), y: Math.round(d.bbox.y1), confidence: d.confidence });
      for (const k of ['x', 'y', 'w', 'h']) expect(Number.isInteger(o[k])).toBe(true);
    }
    expect(body.objects.find((o: any) => o.class_name === 'Hardhat')).toMatchObject({ item: 'hardhat', absent: false });
    expect(body.objects.find((o: any) => o.class_name === 'Person')).toMatchObject({ item: null, absent: false });

    const sent = detector.predictions.slice(predictBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ path: '/v1/predict', jpeg: true, confidence: '0.5', width: body.width, height: body.height });
    expect(sent[0].headers['content-type']).toBe('image/jpeg');
    expect(sent[0].headers.authorization).toBe(`Basic ${Buffer.from(`ppe-user:${SECRET}`).toString('base64')}`);
    // No violation: the LLM is not asked.
    expect(llm.completions().length).toBe(llmBefore);
  });

  it('sends the request confidence as X-Confidence', async () => {
    const before = detector.predictions.length;
    expect((await check('equipped', EQUIPPED_PHOTO, { confidence: 0.3 })).status).toBe(200);
    expect(detector.predictions[before].confidence).toBe('0.3');
  });

  it('two persons, one equipped: a violation (the whole-image rule called it compliant), with the LLM analysis of the findings', async () => {
    llm.mode = 'ok';
    const before = llm.completions().length;
    const image = base64(await readTestImage(EQUIPPED_PHOTO));
    const { status, body } = await check('two-persons-one-equipped');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ppe_status: 'violation',
      person_count: 2,
      present_ppe: ['hardhat', 'safety-vest', 'goggles'],
      missing_ppe: ['hardhat', 'safety-vest', 'goggles'],
      llm_analysis: llm.reply,
    });
    expect(body.persons.map((p: any) => p.status)).toEqual(['compliant', 'violation']);
    expect(body.persons[1]).toMatchObject({ present: [], missing: ['hardhat', 'safety-vest', 'goggles'] });

    // Exactly one LLM request, holding the per-person findings and never the image.
    const sent = llm.completions().slice(before);
    expect(sent).toHaveLength(1);
    const { text, raw } = findingsSent(sent[0]);
    expect(text).toContain('PPE check result: violation.');
    expect(text).toContain('Expected equipment for every person: hardhat, safety-vest, goggles.');
    expect(text).toContain('Persons found: 2; compliant: 1; in violation: 1.');
    expect(text).toMatch(/Person 1 \(box [^)]*\): compliant; wearing: hardhat, safety-vest, goggles; missing: none\./);
    expect(text).toMatch(/Person 2 \(box [^)]*\): violation; wearing: none; missing: hardhat, safety-vest, goggles\./);
    expect(raw).not.toContain(image.slice(0, 64));
    expect(raw).not.toMatch(/base64|data:image|\/9j\//);
    expect(raw.length).toBeLessThan(4000);
    expect((sent[0].body as { model: string }).model).toBe('double-model');
  });

  it('nobody: an item on the floor and no person is no_persons, and the LLM is not asked', async () => {
    const before = llm.completions().length;
    const { status, body } = await check('nobody', EMPTY_PHOTO);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ppe_status: 'no_persons',
      person_count: 0,
      persons: [],
      present_ppe: [],
      missing_ppe: [],
      llm_analysis: null,
    });
    // The detector has no person class in this answer: the object detector looked and found nobody either.
    expect(body.objects.map((o: any) => o.source)).toEqual(['ppe_detector']);
    expect(llm.completions().length).toBe(before);
  });

  it("no person class: the persons are the object detector's, dressed by the detector's item boxes", async () => {
    // Where NanoDet sees the persons of a real photo (the double places the hardhats and vests on them).
    const photo = await readTestImage(PERSONS_PHOTO);
    const found = await postJson(`${server.url}/api/objects/detect`, { image: base64(photo) });
    expect(found.status).toBe(200);
    const { width, height } = (await sharp(photo).metadata()) as { width: number; height: number };
    const people = found.body.objects.filter((o: any) => o.class_name === 'person');
    expect(people.length).toBeGreaterThanOrEqual(2);
    detector.persons = people.map((p: any) => fracOf(p, width, height));

    detector.personItems = ['Hardhat', 'Safety Vest'];
    const partly = await check('no-person-class', PERSONS_PHOTO);
    expect(partly.status).toBe(200);
    expect(partly.body).toMatchObject({ ppe_status: 'violation', person_count: people.length, missing_ppe: ['goggles'] });
    expect(partly.body.persons.map((p: any) => [p.x, p.y, p.w, p.h])).toEqual(people.map((p: any) => [p.x, p.y, p.w, p.h]));
    for (const p of partly.body.persons) expect(p).toMatchObject({ present: ['hardhat', 'safety-vest'], missing: ['goggles'] });
    const fromObjects = partly.body.objects.filter((o: any) => o.source === 'object_detector');
    expect(fromObjects.map((o: any) => o.class_name)).toEqual(people.map(() => 'person'));
    expect(partly.body.summary).toMatchObject({ person: people.length, Hardhat: people.length, 'Safety Vest': people.length });

    detector.personItems = ['Hardhat', 'Safety Vest', 'Goggles'];
    const fully = await check('no-person-class', PERSONS_PHOTO);
    expect(fully.status).toBe(200);
    expect(fully.body).toMatchObject({ ppe_status: 'compliant', person_count: people.length, missing_ppe: [], llm_analysis: null });
    detector.personItems = ['Hardhat', 'Safety Vest'];
  });

  it('no-hardhat: a NO-Hardhat box on the head is a violation missing the hardhat only', async () => {
    const { status, body } = await check('no-hardhat');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      ppe_status: 'violation',
      person_count: 1,
      present_ppe: ['safety-vest', 'goggles'],
      missing_ppe: ['hardhat'],
    });
    expect(body.persons[0]).toMatchObject({ status: 'violation', present: ['safety-vest', 'goggles'], missing: ['hardhat'] });
    expect(body.objects.find((o: any) => o.class_name === 'NO-Hardhat')).toMatchObject({
      item: 'hardhat',
      absent: true,
      source: 'ppe_detector',
    });
  });

  it('an LLM that fails or is too slow: the check completes without an analysis, and a dead letter says why', async () => {
    try {
      llm.mode = 'error500';
      const failed = await check('two-persons-one-equipped');
      expect(failed.status).toBe(200);
      expect(failed.body).toMatchObject({ ppe_status: 'violation', llm_analysis: null });

      llm.mode = 'slow';
      // Past PPE_LLM_TIMEOUT_MS: an answer that waited for the LLM would carry its analysis (no wall clock timed).
      llm.delayMs = 3000;
      const slow = await check('two-persons-one-equipped');
      expect(slow.status).toBe(200);
      expect(slow.body).toMatchObject({ ppe_status: 'violation', llm_analysis: null });
    } finally {
      llm.mode = 'ok';
    }
    const letters = (await deadLetters()).filter((l) => l.stage === 'llm');
    expect(letters.map((l) => l.error.code)).toEqual(['llm_bad_gateway', 'llm_timeout']);
    for (const l of letters) {
      expect(ppeProcessingFailedEvent.strict().safeParse(l).success).toBe(true);
      expect(l.request).toMatchObject({ width: checks.at(-1)!.body.width, height: checks.at(-1)!.body.height, confidence: 0.5 });
    }
    // Kept in the history like any check, with an empty analysis.
    const history = (await getJson(`${server.url}/api/ppe/events?limit=2`)).body.events;
    expect(history.map((e: any) => [e.id, e.llm_analysis])).toEqual([
      [checks.at(-1)!.id, ''],
      [checks.at(-2)!.id, ''],
    ]);
  });
});

describe('POST /api/ppe/detect: failures', () => {
  async function failing(scene: PpeScene | 'down', photo = EQUIPPED_PHOTO) {
    const lettersBefore = (await deadLetters()).length;
    const historyBefore = (await getJson(`${server.url}/api/ppe/events`)).body.count;
    const bytes = await readTestImage(photo);
    let res: { status: number; body: any };
    if (scene === 'down') {
      await detector.stop();
      try {
        res = await postJson(`${server.url}/api/ppe/detect`, { image: base64(bytes) });
      } finally {
        await detector.start();
      }
    } else {
      res = await check(scene, photo);
    }
    // `detail` repeats the message for the original service's clients (#19).
    expect(Object.keys(res.body)).toEqual(['error', 'detail']);
    expect(res.body.detail).toBe(res.body.error.message);
    expect(res.body.error).toEqual({
      code: expect.any(String),
      message: expect.any(String),
      request_id: expect.any(String),
      ...(res.body.error.details ? { details: expect.anything() } : {}),
    });
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    // A failed check is not kept in the history; its dead letter is in the local file (no Kafka here).
    expect((await getJson(`${server.url}/api/ppe/events`)).body.count).toBe(historyBefore);
    const letters = await deadLetters();
    expect(letters.length).toBe(lettersBefore + 1);
    const letter = letters.at(-1);
    expect(ppeProcessingFailedEvent.strict().safeParse(letter).success).toBe(true);
    expect(letter.request.image_sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(JSON.stringify(letter)).not.toContain(SECRET);
    return { ...res, letter, bytes };
  }

  it('a detector error is 502 ppe_detector_failed', async () => {
    const { status, body, letter } = await failing('error');
    expect(status).toBe(502);
    expect(body.error.code).toBe('ppe_detector_failed');
    expect(body.error.message).toMatch(/HTTP 500/);
    expect(body.error.details).toEqual({ upstream_status: 500 });
    expect(letter).toMatchObject({
      event_type: 'ppe_processing_failed',
      stage: 'detector',
      error: { code: 'ppe_detector_failed' },
      attempt: 1,
    });
    const meta = await sharp(await readTestImage(EQUIPPED_PHOTO)).metadata();
    expect(letter.request).toMatchObject({ width: meta.width, height: meta.height, confidence: 0.5 });
  });

  it('an answer that is not a prediction is 502 ppe_detector_failed', async () => {
    const { status, body, letter } = await failing('garbage');
    expect(status).toBe(502);
    expect(body.error.code).toBe('ppe_detector_failed');
    expect(body.error.message).toMatch(/not a prediction/);
    expect(letter).toMatchObject({ stage: 'detector', error: { code: 'ppe_detector_failed' } });
  });

  it('a detector slower than PPE_TIMEOUT_MS is 504 ppe_detector_timeout', async () => {
    // Past PPE_TIMEOUT_MS: a server that waited would answer the detector's 200 (no wall clock timed).
    detector.delayMs = 3000;
    const { status, body, letter } = await failing('slow');
    expect(status).toBe(504);
    expect(body.error.code).toBe('ppe_detector_timeout');
    expect(letter).toMatchObject({ stage: 'detector', error: { code: 'ppe_detector_timeout' } });
  });

  it('a detector whose model is still loading (its 503) is 503 ppe_detector_unavailable, not a failure', async () => {
    const { status, body, letter } = await failing('loading');
    expect(status).toBe(503);
    expect(body.error.code).toBe('ppe_detector_unavailable');
    expect(body.error.message).toMatch(/not ready/);
    expect(letter).toMatchObject({ stage: 'detector', error: { code: 'ppe_detector_unavailable' } });
  });

  it('a detector that cannot be reached is 503 ppe_detector_unavailable', async () => {
    const { status, body, letter } = await failing('down');
    expect(status).toBe(503);
    expect(body.error.code).toBe('ppe_detector_unavailable');
    expect(body.error.message).toContain(`http://127.0.0.1:${detector.port}`);
    expect(letter).toMatchObject({ stage: 'detector', error: { code: 'ppe_detector_unavailable' } });
  });

  it('an image that cannot be decoded is 400 invalid_image with a decode dead letter (no size)', async () => {
    const lettersBefore = (await deadLetters()).length;
    const bytes = Buffer.from('this is not an image at all');
    const { status, body } = await postJson(`${server.url}/api/ppe/detect`, { image: base64(bytes), confidence: 0.7 });
    expect(status).toBe(400);
    expect(body.error.code).toBe('invalid_image');
    const letters = await deadLetters();
    expect(letters.length).toBe(lettersBefore + 1);
    expect(letters.at(-1)).toMatchObject({
      stage: 'decode',
      error: { code: 'invalid_image' },
      request: { image_sha256: createHash('sha256').update(bytes).digest('hex'), width: null, height: null, confidence: 0.7 },
      attempt: 1,
    });
  });

  it('never reaches the detector with a bad request (400 before anything runs)', async () => {
    const before = detector.predictions.length;
    expect((await postJson(`${server.url}/api/ppe/detect`, { image: 'abc', confidence: 2 })).status).toBe(400);
    expect((await postJson(`${server.url}/api/ppe/detect`, {})).status).toBe(400);
    expect(detector.predictions.length).toBe(before);
  });
});

describe('GET /api/ppe/status and /api/ready', () => {
  it('reports the configuration, without the credentials', async () => {
    // The failure tests above stopped and restarted the detector: the background check sees it back within an interval.
    await waitFor('the detector reachable again', async () => (await getJson(`${server.url}/api/ppe/status`)).body.reachable === true);
    const { status, body } = await getJson(`${server.url}/api/ppe/status`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      enabled: true,
      endpoint: `http://127.0.0.1:${detector.port}`,
      reachable: true,
      reason: null,
      expected: ['hardhat', 'safety-vest', 'goggles'],
      events: { sink: 'history', topic: 'cv.ppe.detections', dlq_topic: 'dlq.ppe-errors' },
      history_size: checks.length,
      dataset: { enabled: true, images: checks.length },
    });
    expect(body.events.dead_letters).toBe(`file ${path.join(server.dataDir, 'ppe', 'dead-letters.json')}`);
    expect(body.checked_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(body.aliases).toMatchObject({ hardhat: 'hardhat', helmet: 'hardhat', 'safety vest': 'safety-vest', glasses: 'goggles' });
    expect(JSON.stringify(body)).not.toContain(SECRET);
    expect(JSON.stringify(body)).not.toContain('ppe-user');
    expect((await getJson(`${server.url}/api/ready`)).body).toMatchObject({ status: 'ready', ppe: 'ready' });
  });

  it('follows the detector going away and coming back (checked in the background), never holding readiness back', async () => {
    await detector.stop();
    try {
      await waitFor('unreachable', async () => (await getJson(`${server.url}/api/ppe/status`)).body.reachable === false, 10_000);
      const { body } = await getJson(`${server.url}/api/ppe/status`);
      expect(body.reason).toBe('the PPE detector is unreachable (ECONNREFUSED)');
      expect(body.reason).not.toContain(SECRET);
      const ready = await getJson(`${server.url}/api/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ready', ppe: 'unreachable' });
    } finally {
      await detector.start();
    }
    await waitFor('reachable again', async () => (await getJson(`${server.url}/api/ppe/status`)).body.reachable === true, 10_000);
    expect((await getJson(`${server.url}/api/ready`)).body.ppe).toBe('ready');
  });

  it('a detector whose /health says its model is not loaded (ready: false) or answers an error cannot take checks', async () => {
    const status = async () => (await getJson(`${server.url}/api/ppe/status`)).body;
    try {
      detector.healthReady = false;
      await waitFor('not ready', async () => (await status()).reachable === false, 10_000);
      expect((await status()).reason).toBe('the PPE detector is up but its model is not loaded yet (its /health says ready: false)');
      expect((await getJson(`${server.url}/api/ready`)).body.ppe).toBe('unreachable');
      detector.healthReady = true;
      detector.healthStatus = 500;
      await waitFor(
        'the error',
        async () => (await status()).reason === 'the PPE detector answered its health check with HTTP 500',
        10_000,
      );
    } finally {
      detector.healthReady = true;
      detector.healthStatus = 200;
    }
    await waitFor('ready again', async () => (await status()).reachable === true, 10_000);
  });
});

describe('GET /api/ppe/events', () => {
  it('lists the checks newest first, each as the history record of its event', async () => {
    const { status, body } = await getJson(`${server.url}/api/ppe/events`);
    expect(status).toBe(200);
    expect(body.count).toBe(checks.length);
    expect(body.events.map((e: any) => e.id)).toEqual(checks.map((c) => c.id).reverse());
    for (const e of body.events) {
      expect(ppeHistoryRecord.strict().safeParse(e).success).toBe(true);
      const c = checks.find((x) => x.id === e.id)!;
      expect(e).toMatchObject({
        event_type: 'ppe_compliance_check',
        source: 'lookout-api',
        timestamp: c.body.timestamp,
        ppe_status: c.body.ppe_status,
        person_count: c.body.person_count,
        persons: c.body.persons,
        llm_analysis: c.body.llm_analysis ?? '',
      });
    }
  });

  it('filters by status and limits: ?status=violation&limit=2', async () => {
    const { body } = await getJson(`${server.url}/api/ppe/events?status=violation&limit=2`);
    const violations = checks.filter((c) => c.body.ppe_status === 'violation').map((c) => c.id);
    expect(violations.length).toBeGreaterThan(2);
    expect(body.count).toBe(2);
    expect(body.events.map((e: any) => e.id)).toEqual(violations.slice(-2).reverse());
    expect(body.events.every((e: any) => e.ppe_status === 'violation')).toBe(true);
    expect((await getJson(`${server.url}/api/ppe/events?status=no_persons`)).body.events.map((e: any) => e.id)).toEqual(
      checks.filter((c) => c.body.ppe_status === 'no_persons').map((c) => c.id),
    );
    expect((await getJson(`${server.url}/api/ppe/events?status=unsafe`)).status).toBe(400);
    expect((await getJson(`${server.url}/api/ppe/events?limit=0`)).status).toBe(400);
  });

  it('keeps every one of 8 concurrent checks', async () => {
    detector.scene = 'equipped';
    const image = base64(await readTestImage(EQUIPPED_PHOTO));
    const results = await Promise.all(Array.from({ length: 8 }, () => postJson(`${server.url}/api/ppe/detect`, { image })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(200));
    const ids = results.map((r) => r.body.id);
    for (const r of results) checks.push({ id: r.body.id, scene: 'equipped', photo: EQUIPPED_PHOTO, body: r.body });
    expect(new Set(ids).size).toBe(8);
    const listed = (await getJson(`${server.url}/api/ppe/events?limit=1000`)).body.events.map((e: any) => e.id);
    for (const id of ids) expect(listed).toContain(id);
    // On disk too (each add resolved after its write).
    const onDisk = JSON.parse(await fs.readFile(path.join(server.dataDir, 'ppe', 'history.json'), 'utf8')).records.map((r: any) => r.id);
    expect(onDisk).toEqual([...listed].reverse());
  });
});

describe('the training dataset (PPE_DATASET_DIR)', () => {
  it('keeps each checked frame with its YOLO labels and the class list', async () => {
    const classes = (await fs.readFile(path.join(datasetDir, 'classes.txt'), 'utf8')).split('\n').filter(Boolean);
    // First-seen order: the equipped scene came first.
    expect(classes.slice(0, 4)).toEqual(['Person', 'Hardhat', 'Goggles', 'Safety Vest']);
    expect(classes).toContain('NO-Hardhat');
    expect(new Set(classes).size).toBe(classes.length);
    for (const c of checks) {
      const jpeg = await fs.readFile(path.join(datasetDir, 'images', `${c.id}.jpg`));
      expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
      const meta = await sharp(jpeg).metadata();
      expect([meta.width, meta.height]).toEqual([c.body.width, c.body.height]);
      const lines = (await fs.readFile(path.join(datasetDir, 'labels', `${c.id}.txt`), 'utf8')).split('\n').filter(Boolean);
      // One line per detector detection (never the object detector's persons).
      const detections = c.body.objects.filter((o: any) => o.source === 'ppe_detector');
      expect(lines).toHaveLength(detections.length);
      const { width: W, height: H } = c.body;
      lines.forEach((line, i) => {
        const [index, cx, cy, w, h] = line.split(' ').map(Number);
        const d = detections[i];
        expect(classes[index]).toBe(d.class_name);
        // The response's integer box is the detector's box rounded: within a pixel.
        expect(Math.abs(cx * W - (d.x + d.w / 2))).toBeLessThanOrEqual(1);
        expect(Math.abs(cy * H - (d.y + d.h / 2))).toBeLessThanOrEqual(1);
        expect(Math.abs(w * W - d.w)).toBeLessThanOrEqual(1);
        expect(Math.abs(h * H - d.h)).toBeLessThanOrEqual(1);
        for (const v of [cx, cy, w, h]) expect(v >= 0 && v <= 1).toBe(true);
      });
    }
    // Exactly the double's boxes, normalised, for the first (equipped) frame.
    const first = checks[0];
    const expected = detector.detectionsFor('equipped', first.body.width, first.body.height);
    const lines = (await fs.readFile(path.join(datasetDir, 'labels', `${first.id}.txt`), 'utf8')).trim().split('\n');
    lines.forEach((line, i) => {
      const [index, cx, cy, w, h] = line.split(' ').map(Number);
      const b = expected[i].bbox;
      expect(classes[index]).toBe(expected[i].class_name);
      expect(cx).toBeCloseTo((b.x1 + b.x2) / 2 / first.body.width, 5);
      expect(cy).toBeCloseTo((b.y1 + b.y2) / 2 / first.body.height, 5);
      expect(w).toBeCloseTo((b.x2 - b.x1) / first.body.width, 5);
      expect(h).toBeCloseTo((b.y2 - b.y1) / first.body.height, 5);
    });
  });

  it('GET /api/ppe/dataset.zip unzips to the same files', async () => {
    const res = await fetch(`${server.url}/api/ppe/dataset.zip`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/zip');
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="ppe-dataset\.zip"/);
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const onDisk: Record<string, Buffer> = { 'classes.txt': await fs.readFile(path.join(datasetDir, 'classes.txt')) };
    for (const dir of ['images', 'labels']) {
      for (const name of await fs.readdir(path.join(datasetDir, dir)))
        onDisk[`${dir}/${name}`] = await fs.readFile(path.join(datasetDir, dir, name));
    }
    expect(Object.keys(files).sort()).toEqual(Object.keys(onDisk).sort());
    expect(Object.keys(onDisk).filter((n) => n.startsWith('images/'))).toHaveLength(checks.length);
    for (const [name, bytes] of Object.entries(onDisk)) expect(Buffer.from(files[name]).equals(bytes), name).toBe(true);
  });
});

describe('PPE off, not configured, bounded and restarted', () => {
  const LIGHT = { WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' };

  it('PPE_ENABLED=false: 503 ppe_disabled, status and readiness say so, no dataset (404)', async () => {
    const off = await startTestServer(LIGHT);
    try {
      const res = await postJson(`${off.url}/api/ppe/detect`, { image: base64(await readTestImage(EQUIPPED_PHOTO)) });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('ppe_disabled');
      const status = (await getJson(`${off.url}/api/ppe/status`)).body;
      expect(status).toMatchObject({
        enabled: false,
        reachable: false,
        endpoint: null,
        reason: 'PPE checks are switched off (PPE_ENABLED=false)',
      });
      expect(status.dataset).toEqual({ enabled: false, images: 0 });
      const ready = await getJson(`${off.url}/api/ready`);
      expect(ready.status).toBe(200);
      expect(ready.body.ppe).toBe('disabled');
      const zip = await getJson(`${off.url}/api/ppe/dataset.zip`);
      expect(zip.status).toBe(404);
      expect(zip.body.error.code).toBe('dataset_disabled');
      expect((await getJson(`${off.url}/api/ppe/events`)).body).toEqual({ events: [], count: 0 });
    } finally {
      await off.close();
    }
  });

  it('PPE_ENABLED=true without PPE_ENDPOINT: 503 ppe_not_configured', async () => {
    const bare = await startTestServer({ ...LIGHT, PPE_ENABLED: 'true' });
    try {
      const res = await postJson(`${bare.url}/api/ppe/detect`, { image: base64(await readTestImage(EQUIPPED_PHOTO)) });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('ppe_not_configured');
      expect((await getJson(`${bare.url}/api/ppe/status`)).body).toMatchObject({
        enabled: true,
        endpoint: null,
        reachable: false,
        reason: 'no PPE detector is configured (set PPE_ENDPOINT)',
      });
      expect((await getJson(`${bare.url}/api/ready`)).body.ppe).toBe('not_configured');
    } finally {
      await bare.close();
    }
  });

  it('a bad PPE_CLASS_ALIASES stops the server at start, naming the entry', async () => {
    await expect(
      startTestServer({ ...LIGHT, PPE_ENABLED: 'true', PPE_ENDPOINT: detector.url, PPE_CLASS_ALIASES: 'Hardhat=hardhat,vest' }),
    ).rejects.toThrow(/PPE_CLASS_ALIASES: "vest" is not name=item/);
  });

  it('keeps PPE_HISTORY_MAX checks across a restart; class indices stay; chat off: no analysis and no dead letter', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-ppe-restart-'));
    const dataset = path.join(dataDir, 'dataset');
    // A detector timeout far beyond the default 10 s: on a loaded machine (a full test run on two cores) a check once
    // took longer, and its timeout's dead letter is not what this test is about (chat off: no analysis, none).
    const env = {
      ...LIGHT,
      PPE_ENABLED: 'true',
      PPE_ENDPOINT: detector.url,
      PPE_TIMEOUT_MS: '60000',
      PPE_HISTORY_MAX: '3',
      PPE_DATASET_DIR: dataset,
    };
    try {
      const first = await startTestServer(env, dataDir);
      const ids: string[] = [];
      try {
        for (let i = 0; i < 4; i++) {
          const res = await check('equipped', EQUIPPED_PHOTO, {}, first);
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          ids.push(res.body.id);
        }
        const violation = await check('two-persons-one-equipped', EQUIPPED_PHOTO, {}, first);
        expect(violation.status, JSON.stringify(violation.body)).toBe(200);
        expect(violation.body).toMatchObject({ ppe_status: 'violation', llm_analysis: null });
        ids.push(violation.body.id);
        expect(await deadLetters(dataDir)).toEqual([]);
        const { body } = await getJson(`${first.url}/api/ppe/events`);
        expect(body.events.map((e: any) => e.id)).toEqual(ids.slice(-3).reverse());
      } finally {
        await first.close();
      }
      const classesBefore = await fs.readFile(path.join(dataset, 'classes.txt'), 'utf8');
      expect(classesBefore).toBe('Person\nHardhat\nGoggles\nSafety Vest\n');

      const second = await startTestServer(env, dataDir);
      try {
        expect((await getJson(`${second.url}/api/ppe/events`)).body.events.map((e: any) => e.id)).toEqual(ids.slice(-3).reverse());
        expect((await getJson(`${second.url}/api/ppe/status`)).body).toMatchObject({
          history_size: 3,
          dataset: { enabled: true, images: 5 },
        });
        const more = await check('no-hardhat', EQUIPPED_PHOTO, {}, second);
        expect(more.status).toBe(200);
        expect(await fs.readFile(path.join(dataset, 'classes.txt'), 'utf8')).toBe(`${classesBefore}NO-Hardhat\n`);
        const label = await fs.readFile(path.join(dataset, 'labels', `${more.body.id}.txt`), 'utf8');
        // Person 0, NO-Hardhat 4 (new), Goggles 2, Safety Vest 3: the old indices kept.
        expect(
          label
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split(' ')[0]),
        ).toEqual(['0', '4', '2', '3']);
        expect((await getJson(`${second.url}/api/ppe/events`)).body.events.map((e: any) => e.id)).toEqual([
          more.body.id,
          ...ids.slice(-2).reverse(),
        ]);
      } finally {
        await second.close();
      }
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
