/**
 * #26 measurement: recognition of live camera frames with the `embedding` recognizer while the sightings keep their
 * faces (SIGHTINGS_* defaults, source `camera`): frames per second a camera gets answered and its sightings decided,
 * and how many faces the embedding worker describes per face seen (2 when the sighting recorder describes again
 * what the recognition described, 1 when it reuses the recognition's descriptors). The real service in this process
 * (createService), requests through its Hono app; three people trained from the licensed test faces, each frame
 * 1280 x 720 with two of them, moved a little from frame to frame. CPU time per frame counts every thread of the
 * process (the API, the vision and embedding workers), from the first frame until the last sighting is decided.
 *
 *   npx tsx scripts/descriptor-reuse.ts [frames=30] [cameras=1]
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { createService } from '../server/app.js';
import { loadSettings } from '../server/config/settings.js';
import { createLogger } from '../server/logger.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const face = (f: string) => fs.readFile(path.join(ROOT, 'test/fixtures/images/faces', f));

async function main(): Promise<void> {
  const frames = Number(process.argv[2] ?? 30);
  const cameras = Number(process.argv[3] ?? 1);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-descriptor-reuse-'));
  const env = { OBJECT_DETECTION_ENABLED: 'false', LOG_LEVEL: 'warn', WORKERS: '2', ...process.env, DATA_DIR: dataDir };
  const settings = loadSettings(env as Record<string, string>, ROOT);
  const service = await createService(settings, createLogger(settings.logLevel));
  const { faces, images, sightingRecorder, sightings } = service.ctx;
  try {
    const deadline = Date.now() + 180_000;
    while (!faces.embeddingAvailability.available) {
      if (Date.now() > deadline) throw new Error('the embedding worker did not load');
      await new Promise((r) => setTimeout(r, 200));
    }
    const people = { grace: await face('grace_hopper.jpg'), eileen: await face('astronaut.png'), lionel: await face('messi5.jpg') };
    for (const [label, bytes] of Object.entries(people)) {
      for (const brightness of [0.9, 1, 1.1]) {
        await images.save(label, await sharp(bytes).modulate({ brightness }).jpeg({ quality: 92 }).toBuffer(), 'jpeg');
      }
    }
    await faces.train();
    faces.setRecognitionModel('embedding');

    // Frames: grace and eileen side by side, faces about 150 px, shifted by a few pixels each frame.
    const portrait = (bytes: Buffer) => sharp(bytes).resize({ width: 380 }).png().toBuffer();
    const [left, right] = [await portrait(people.grace), await portrait(people.eileen)];
    const frame = (i: number) =>
      sharp({ create: { width: 1280, height: 720, channels: 3, background: { r: 90, g: 90, b: 90 } } })
        .composite([
          { input: left, left: 120 + (i % 5) * 6, top: 120 },
          { input: right, left: 760 - (i % 5) * 6, top: 140 },
        ])
        .jpeg({ quality: 88 })
        .toBuffer();
    const bodies = await Promise.all(Array.from({ length: 5 }, async (_, i) => (await frame(i)).toString('base64')));
    let seen = 0;
    const send = async (i: number, camera: string) => {
      const res = await service.app.fetch(
        new Request('http://127.0.0.1/api/recognize', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ image: bodies[i % bodies.length], source: 'camera', camera }),
        }),
      );
      if (res.status !== 200) throw new Error(`recognize answered ${res.status}: ${await res.text()}`);
      seen += ((await res.json()) as { count: number }).count;
    };
    // Warm-up (nets, caches), then each camera sends its frames one after the other, as a live page does.
    for (let i = 0; i < 3; i++) await send(i, 'warm-up');
    await sightingRecorder.idle();
    seen = 0;
    const describedBefore = await faces.embeddingDescribed().catch(() => null);
    const keptBefore = await sightings.count();
    const latencies: number[] = [];
    // CPU time of the whole process (every thread): on a shared, loaded machine a steadier figure than wall time.
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: cameras }, async (_, c) => {
        for (let i = 0; i < frames; i++) {
          const t = performance.now();
          await send(i, `camera-${c}`);
          latencies.push(performance.now() - t);
        }
      }),
    );
    const answered = performance.now() - t0;
    await sightingRecorder.idle();
    const settled = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const describedAfter = await faces.embeddingDescribed().catch(() => null);
    latencies.sort((a, b) => a - b);
    const q = (p: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]);
    console.log(
      JSON.stringify({
        frames: frames * cameras,
        cameras,
        faces_seen: seen,
        answered_s: Number((answered / 1000).toFixed(2)),
        frames_per_s: Number(((frames * cameras * 1000) / answered).toFixed(2)),
        p50_ms: q(0.5),
        p95_ms: q(0.95),
        sightings_settled_s: Number((settled / 1000).toFixed(2)),
        cpu_ms_per_frame: Math.round((cpu.user + cpu.system) / 1000 / (frames * cameras)),
        sightings_kept: (await sightings.count()) - keptBefore,
        described_per_face:
          describedBefore !== null && describedAfter !== null ? Number(((describedAfter - describedBefore) / seen).toFixed(2)) : null,
        load: os.loadavg().map((l) => Number(l.toFixed(1))),
      }),
    );
  } finally {
    await service.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await main();
