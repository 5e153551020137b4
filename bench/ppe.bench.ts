/**
 * PPE check benchmark (issue #14): what Lookout adds to the PPE detector per frame. `POST /api/ppe/detect` on a
 * 640x480 JPEG (decode, re-encode as JPEG, the detector call, the per-person rule, the history write, the event)
 * against the bare detector call it makes (`POST /v1/predict` with the same JPEG) in the same run; the overhead is
 * the difference. Also checks per second with 4 requests in flight against bare calls at the same concurrency.
 *
 * The detector is the PPE detector test double on 127.0.0.1 (no PPE model exists here), scene
 * `two-persons-one-equipped`, so every check is a violation; chat is off (no LLM note) and there is no Kafka.
 */
import path from 'node:path';
import sharp from 'sharp';
import { startPpeDetectorDouble } from '../test/helpers/ppe-detector-double.js';
import { startBenchServer } from './browser.js';
import { type BenchRow, timeRuns } from './types.js';

const WARMUP = 5;
const RUNS = 40;
const CONCURRENT_REQUESTS = 80;

/** Requests per second with `concurrency` in flight until `total` are done. */
async function rate(fn: () => Promise<void>, concurrency: number, total: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await fn();
    }),
  );
  return (total * 1000) / (performance.now() - t0);
}

export async function benchPpe(repoRoot: string): Promise<BenchRow[]> {
  const detector = await startPpeDetectorDouble({ scene: 'two-persons-one-equipped' });
  const api = await startBenchServer(repoRoot, {
    PPE_ENABLED: 'true',
    PPE_ENDPOINT: detector.url,
    OBJECT_DETECTION_ENABLED: 'false',
    EMBEDDING_ENABLED: 'false',
  });
  try {
    const photo = path.join(repoRoot, 'test/fixtures/images/objects/pexels_double_decker_bus.jpg');
    const jpeg = await sharp(photo).resize(640, 480, { fit: 'cover' }).jpeg({ quality: 90 }).toBuffer();
    const body = JSON.stringify({ image: jpeg.toString('base64') });
    const check = async () => {
      const res = await fetch(`${api.url}/api/ppe/detect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const answer = (await res.json()) as { ppe_status?: string };
      if (!res.ok || answer.ppe_status !== 'violation')
        throw new Error(`bench: the check answered ${res.status} ${JSON.stringify(answer).slice(0, 200)}`);
    };
    const bare = async () => {
      const res = await fetch(`${detector.url}/v1/predict`, {
        method: 'POST',
        headers: { 'content-type': 'image/jpeg', 'x-confidence': '0.5' },
        body: new Uint8Array(jpeg),
      });
      if (!res.ok) throw new Error(`bench: the detector answered ${res.status}`);
      await res.arrayBuffer();
    };
    const lookoutMs = await timeRuns(check, WARMUP, RUNS);
    const bareMs = await timeRuns(bare, WARMUP, RUNS);
    const lookoutRate = await rate(check, 4, CONCURRENT_REQUESTS);
    const bareRate = await rate(bare, 4, CONCURRENT_REQUESTS);
    return [
      {
        name: 'PPE check, 640x480 JPEG, 2 persons, POST /api/ppe/detect (detector: the test double)',
        unit: 'ms',
        lookout: lookoutMs,
        reference: bareMs,
        referenceName: 'the bare detector call (POST /v1/predict, same JPEG)',
        ratio: lookoutMs / bareMs,
      },
      { name: 'PPE check overhead excluding the detector (check minus bare call)', unit: 'ms', lookout: lookoutMs - bareMs },
      {
        name: 'PPE checks per second, concurrency 4',
        unit: 'checks/s',
        lookout: lookoutRate,
        reference: bareRate,
        referenceName: 'bare detector calls/s, concurrency 4',
        ratio: lookoutRate / bareRate,
      },
    ];
  } finally {
    await api.close();
    await detector.close();
  }
}
