/**
 * `npm run bench scale` (#27 section 4): what a gallery of N training photos (3 per person) costs a real server
 * process (dist/server/main.js, the `npm start` defaults, a temporary DATA_DIR), at N = 100, 1,000 and 10,000
 * (SCALE_SIZES=100,1000 to choose): upload, the first (full) training, a training after adding one person and
 * after deleting one (the per-image features of #27 section 1 are reused by both), recognise p50/p95 for each
 * recognizer (lbph, embedding), the model bytes on disk and what a browser downloads (GET /api/models/trained, the
 * bytes on the wire with gzip/br offered), and the server's memory (VmRSS after training, VmHWM in the retrain).
 * The photos are generated from the licensed test faces (test/fixtures/images/faces, every face the cascade finds of
 * at least 90 px) with small random changes: crop jitter, scale, brightness, mirror, JPEG quality; identities repeat
 * under other labels (fine for timing). OpenCV 4.6's LBPH on the same photos in the same run is the reference
 * (bench/reference/opencv_scale.py): train() from scratch, update() with one person, predict().
 * Env: SCALE_SIZES (photo counts), SCALE_PROBES (recognise requests per recognizer, default 30),
 * SCALE_KEEP=1 keeps the DATA_DIRs. Runs only when named (`npm run bench scale`): at 10,000 photos it takes hours.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { type BenchRow, median } from './types.js';

const run = promisify(execFile);
const SIZES = (process.env.SCALE_SIZES ?? '100,1000,10000').split(',').map(Number);
const PROBES = Number(process.env.SCALE_PROBES ?? 30);
const PHOTOS_PER_PERSON = 3;
const SIDE = 200;
const UPLOAD_CONCURRENCY = 4;
const CASCADE = 'public/models/haarcascade_frontalface_alt2.xml';
const OPENCV = 'OpenCV 4.6 LBPH, same photos, 1 thread';

/** One face of a test photo, cut out with room around it for jitter (decoded once, not per generated photo). */
interface Source {
  region: Buffer;
  size: number;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function sources(repoRoot: string): Promise<Source[]> {
  const dir = path.join(repoRoot, 'test/fixtures/images/faces');
  const files = (await fs.readdir(dir)).filter((f) => /\.(jpg|png)$/.test(f)).map((f) => path.join(dir, f));
  const { stdout } = await run('/usr/bin/python3', ['bench/reference/opencv_scale.py', 'boxes', CASCADE, '90', ...files], {
    cwd: repoRoot,
    maxBuffer: 1 << 24,
  });
  const boxes = JSON.parse(stdout) as Record<string, [number, number, number, number][]>;
  const found: Source[] = [];
  for (const file of files) {
    const meta = await sharp(file).metadata();
    for (const [x, y, w, h] of boxes[file] ?? []) {
      // 2.4 face widths around the face: the generated photo takes 1.8 to 2.1 of it, moved a little.
      const size = Math.round(w * 2.4);
      const left = Math.round(x + w / 2 - size / 2);
      const top = Math.round(y + h / 2 - size / 2);
      if (left < 0 || top < 0 || left + size > meta.width! || top + size > meta.height!) continue;
      const region = await sharp(file).extract({ left, top, width: size, height: size }).png().toBuffer();
      found.push({ region, size });
    }
  }
  if (found.length < 3) throw new Error(`bench scale: only ${found.length} test faces found`);
  return found;
}

/** A photo of source face `source`, changed a little at random: a new capture for the recognisers. */
async function photo(source: Source, random: () => number): Promise<Buffer> {
  const side = Math.round((source.size / 2.4) * (1.8 + random() * 0.3));
  const slack = source.size - side;
  const left = Math.round(slack / 2 + (random() - 0.5) * slack * 0.8);
  const top = Math.round(slack / 2 + (random() - 0.5) * slack * 0.8);
  let image = sharp(source.region)
    .extract({ left, top, width: side, height: side })
    .resize(SIDE, SIDE)
    .modulate({ brightness: 0.8 + random() * 0.4 });
  if (random() < 0.5) image = image.flop();
  return image.jpeg({ quality: 85 + Math.floor(random() * 10) }).toBuffer();
}

function label(p: number): string {
  return `person-${String(p).padStart(5, '0')}`;
}

async function startServer(repoRoot: string, dataDir: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repoRoot, 'dist/server/main.js')], {
    cwd: repoRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench scale: the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/api/ready`)).ok) return { url, child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('bench scale: the server did not start');
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
}

/** kB figures of /proc/<pid>/status, e.g. VmRSS, VmHWM. */
async function memory(pid: number): Promise<Record<string, number>> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const out: Record<string, number> = {};
  for (const m of status.matchAll(/^(Vm\w+):\s+(\d+) kB/gm)) out[m[1]] = Number(m[2]);
  return out;
}

/** Resets VmHWM to the current RSS (Linux clear_refs 5), so the next read is the peak of what runs in between. */
async function resetPeak(pid: number): Promise<boolean> {
  try {
    await fs.writeFile(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

async function upload(url: string, who: string, bytes: Buffer, n: number): Promise<void> {
  const form = new FormData();
  form.set('label', who);
  form.set('file', new Blob([new Uint8Array(bytes)]), `capture-${n}.jpg`);
  const res = await fetch(`${url}/api/images`, { method: 'POST', body: form });
  if (!res.ok) throw new Error(`bench scale: upload answered ${res.status}: ${await res.text()}`);
}

interface Trained {
  seconds: number;
  features?: { reused: number; computed: number };
  images_skipped: unknown[];
  recognizers_trained: string[];
}

async function train(url: string): Promise<Trained> {
  const t0 = performance.now();
  // node:http, not fetch: fetch gives up on an answer whose headers take over 300 s (a full training at 10,000 photos).
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(`${url}/api/train`, { method: 'POST' }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
  const body = JSON.parse(text) as Omit<Trained, 'seconds'>;
  if (status !== 200) throw new Error(`bench scale: training answered ${status}: ${text}`);
  return { ...body, seconds: (performance.now() - t0) / 1000 };
}

/** Bytes on the wire of a GET offering gzip and br, not decoded (fetch would decode them). */
async function wireBytes(url: string): Promise<{ bytes: number; encoding: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`bench scale: ${url} answered ${res.statusCode}`));
          else resolve({ bytes, encoding: String(res.headers['content-encoding'] ?? 'identity') });
        });
      })
      .on('error', reject);
  });
}

/** The compact browser model (#27 section 2), when the server has it: every segment fetched, bytes as sent. */
async function compactBytes(url: string): Promise<{ lbph: number; embedding: number; raw: number } | undefined> {
  const res = await fetch(`${url}/api/models/trained/compact`);
  if (!res.ok) return undefined;
  type Part = { people: { hash: string; bytes: number }[] } | null;
  const manifest = (await res.json()) as { segments_url: string; lbph: Part; embedding: Part };
  const sent = async (part: Part) => {
    let bytes = 0;
    const hashes = part?.people.map((p) => p.hash) ?? [];
    for (let i = 0; i < hashes.length; i += 200) {
      bytes += (await wireBytes(`${url}${manifest.segments_url}?hashes=${hashes.slice(i, i + 200).join(',')}`)).bytes;
    }
    return bytes;
  };
  const raw = [manifest.lbph, manifest.embedding].reduce((sum, part) => sum + (part?.people.reduce((s, p) => s + p.bytes, 0) ?? 0), 0);
  return { lbph: await sent(manifest.lbph), embedding: await sent(manifest.embedding), raw };
}

async function diskBytes(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await fs.stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.round((p / 100) * (sorted.length - 1)))];
}

/** p50/p95 of POST /api/recognize over the probes, and how many answers held a face that was measured (a distance). */
async function recognise(
  url: string,
  probes: Buffer[],
  model: 'lbph' | 'embedding',
): Promise<{ p50: number; p95: number; measured: number }> {
  const times: number[] = [];
  let measured = 0;
  for (let i = -2; i < probes.length; i++) {
    const body = JSON.stringify({ image: probes[Math.max(0, i)].toString('base64'), recognition_model: model });
    const t0 = performance.now();
    const res = await fetch(`${url}/api/recognize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (!res.ok) throw new Error(`bench scale: recognize (${model}) answered ${res.status}: ${await res.text()}`);
    const answer = (await res.json()) as { faces: { distance?: number }[] };
    if (i < 0) continue; // the first two warm the worker up (and build the model's search lists)
    times.push(performance.now() - t0);
    if (answer.faces.some((f) => f.distance !== undefined)) measured++;
  }
  return { p50: median(times), p95: percentile(times, 95), measured };
}

interface OpenCvFigures {
  opencv: string;
  faces: number;
  skipped: number;
  prepare_ms: number;
  train_ms: number;
  update_ms: number;
  write_ms: number;
  yml_bytes: number;
  predict_p50_ms: number;
  predict_p95_ms: number;
}

const mb = (bytes: number) => bytes / 1e6;

async function measure(repoRoot: string, faces: Source[], photos: number): Promise<BenchRow[]> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), `lookout-bench-scale-${photos}-`));
  const dataDir = path.join(work, 'data');
  const gallery = path.join(work, 'gallery');
  const probeDir = path.join(work, 'probes');
  const random = seededRandom(photos);
  const people = Math.max(2, Math.round(photos / PHOTOS_PER_PERSON));
  const added = label(people); // joins after the first training
  const deleted = label(0);
  let server: { url: string; child: ChildProcess } | undefined;
  const t = (s: number) => s.toFixed(1);
  try {
    // The gallery on disk first (OpenCV reads the same files), then the probes: fresh captures of gallery people.
    const t0 = performance.now();
    for (let p = 0; p <= people; p++) {
      await fs.mkdir(path.join(gallery, label(p)), { recursive: true });
      for (let k = 0; k < PHOTOS_PER_PERSON; k++) {
        await fs.writeFile(path.join(gallery, label(p), `${k}.jpg`), await photo(faces[p % faces.length], random));
      }
    }
    await fs.mkdir(probeDir);
    const probes: Buffer[] = [];
    for (let i = 0; i < PROBES; i++) {
      const bytes = await photo(faces[Math.floor(random() * people) % faces.length], random);
      probes.push(bytes);
      await fs.writeFile(path.join(probeDir, `${String(i).padStart(3, '0')}.jpg`), bytes);
    }
    // A capture in which the cascade finds no face is taken again (a few rounds): the gallery holds N faces, and
    // the person added later is surely in the next model.
    let retaken = 0;
    let check: string[] = []; // first round: every file; then only those taken again
    for (let round = 0; round < 5; round++) {
      const { stdout } = await run('/usr/bin/python3', ['bench/reference/opencv_scale.py', 'faceless', CASCADE, work, ...check], {
        cwd: repoRoot,
        maxBuffer: 1 << 24,
      });
      const missing = JSON.parse(stdout) as string[];
      if (!missing.length) break;
      check = missing;
      for (const file of missing) {
        // gallery/person-NNNNN/K.jpg or probes/III.jpg
        const parts = file.split('/');
        const probe = parts[0] === 'probes';
        const person = probe ? Math.floor(random() * people) : Number(parts[1].split('-')[1]);
        const bytes = await photo(faces[person % faces.length], random);
        await fs.writeFile(path.join(work, file), bytes);
        if (probe) probes[Number(parts[1].split('.')[0])] = bytes;
        retaken++;
      }
    }
    console.log(
      `scale ${photos}: ${people} people x ${PHOTOS_PER_PERSON} photos generated in ${t((performance.now() - t0) / 1000)} s (${retaken} taken again: no face found)`,
    );

    server = await startServer(repoRoot, dataDir);
    const { url, child } = server;
    const pid = child.pid!;
    const names = Array.from({ length: people }, (_, p) => label(p));
    const queue = names.flatMap((who) => Array.from({ length: PHOTOS_PER_PERSON }, (_, k) => ({ who, k })));
    const t1 = performance.now();
    await Promise.all(
      Array.from({ length: UPLOAD_CONCURRENCY }, async () => {
        for (let item = queue.shift(); item; item = queue.shift()) {
          await upload(url, item.who, await fs.readFile(path.join(gallery, item.who, `${item.k}.jpg`)), item.k);
        }
      }),
    );
    const uploadSeconds = (performance.now() - t1) / 1000;
    const uploaded = people * PHOTOS_PER_PERSON;
    console.log(`scale ${photos}: ${uploaded} photos uploaded in ${t(uploadSeconds)} s`);

    const full = await train(url);
    const afterFull = await memory(pid);
    console.log(
      `scale ${photos}: full training ${t(full.seconds)} s (${full.recognizers_trained.join(' + ')}, features ${JSON.stringify(full.features)}, ${full.images_skipped.length} skipped), RSS ${Math.round(afterFull.VmRSS / 1024)} MB, peak so far ${Math.round(afterFull.VmHWM / 1024)} MB`,
    );

    for (let k = 0; k < PHOTOS_PER_PERSON; k++) await upload(url, added, await fs.readFile(path.join(gallery, added, `${k}.jpg`)), k);
    const peakReset = await resetPeak(pid);
    const add = await train(url);
    const retrain = await memory(pid);
    console.log(
      `scale ${photos}: training after adding 1 person ${t(add.seconds)} s (features ${JSON.stringify(add.features)}), peak RSS in it ${Math.round(retrain.VmHWM / 1024)} MB${peakReset ? '' : ' (since start: clear_refs refused)'}`,
    );

    const removed = await fetch(`${url}/api/images/${deleted}`, { method: 'DELETE' });
    if (!removed.ok) throw new Error(`bench scale: delete answered ${removed.status}`);
    const del = await train(url);
    console.log(`scale ${photos}: training after deleting 1 person ${t(del.seconds)} s (features ${JSON.stringify(del.features)})`);

    const lbph = await recognise(url, probes, 'lbph');
    const embedding = full.recognizers_trained.includes('embedding') ? await recognise(url, probes, 'embedding') : undefined;
    console.log(
      `scale ${photos}: recognise LBPH p50 ${lbph.p50.toFixed(0)} / p95 ${lbph.p95.toFixed(0)} ms (${lbph.measured}/${probes.length} with a face measured), embedding ${embedding ? `${embedding.p50.toFixed(0)} / ${embedding.p95.toFixed(0)} ms (${embedding.measured}/${probes.length})` : 'not trained'}`,
    );

    const described = (await (await fetch(`${url}/api/models/trained`)).json()) as {
      lbph: { available: boolean; url: string; bytes: number | null };
      embedding: { available: boolean; url: string; bytes: number | null };
    };
    const lbphWire = described.lbph.available ? await wireBytes(`${url}${described.lbph.url}`) : undefined;
    const embeddingWire = described.embedding.available ? await wireBytes(`${url}${described.embedding.url}`) : undefined;
    const compact = await compactBytes(url);
    if (compact) {
      console.log(
        `scale ${photos}: compact browser model: LBPH ${t(mb(compact.lbph))} MB, embedding ${t(mb(compact.embedding))} MB sent (${t(mb(compact.raw))} MB uncompressed)`,
      );
    }
    const onDisk = await diskBytes(path.join(dataDir, 'models'));
    const featureBytes = await diskBytes(path.join(dataDir, 'features')).catch(() => 0);
    console.log(
      `scale ${photos}: models on disk ${t(mb(onDisk))} MB (features ${t(mb(featureBytes))} MB); browser: LBPH ${t(mb(described.lbph.bytes ?? 0))} MB described, ${lbphWire ? `${t(mb(lbphWire.bytes))} MB sent (${lbphWire.encoding})` : '-'}; embedding ${t(mb(described.embedding.bytes ?? 0))} MB described, ${embeddingWire ? `${t(mb(embeddingWire.bytes))} MB sent (${embeddingWire.encoding})` : '-'}`,
    );
    await stop(child);

    // OpenCV on the same photos, once the server is down (the two do not share the 2 cores).
    const { stdout } = await run(
      '/usr/bin/python3',
      ['bench/reference/opencv_scale.py', 'lbph', CASCADE, gallery, added, probeDir, path.join(work, 'opencv.yml')],
      { cwd: repoRoot, maxBuffer: 1 << 20 },
    );
    const cv = JSON.parse(stdout) as OpenCvFigures;
    console.log(`scale ${photos}: ${OPENCV} ${JSON.stringify(cv)}`);

    const at = `${photos} photos`;
    const rows: BenchRow[] = [
      {
        name: `scale ${at}: upload, per photo (${uploaded} in ${t(uploadSeconds)} s, concurrency ${UPLOAD_CONCURRENCY})`,
        unit: 'ms',
        lookout: (uploadSeconds * 1000) / uploaded,
      },
      {
        name: `scale ${at}: full training (POST /api/train, ${full.recognizers_trained.join(' + ')}; reference: decode + detect + train() from scratch)`,
        unit: 's',
        lookout: full.seconds,
        reference: (cv.prepare_ms + cv.train_ms) / 1000,
        referenceName: OPENCV,
        ratio: full.seconds / ((cv.prepare_ms + cv.train_ms) / 1000),
      },
      {
        name: `scale ${at}: training after adding 1 person (features ${add.features?.reused ?? '?'} reused, ${add.features?.computed ?? '?'} computed; reference: update())`,
        unit: 's',
        lookout: add.seconds,
        reference: cv.update_ms / 1000,
        referenceName: OPENCV,
        ratio: add.seconds / (cv.update_ms / 1000),
        goal: 'at 3,000 photos <= 10 s',
      },
      {
        name: `scale ${at}: training after deleting 1 person (features ${del.features?.reused ?? '?'} reused; reference: train() from scratch on the crops)`,
        unit: 's',
        lookout: del.seconds,
        reference: cv.train_ms / 1000,
        referenceName: OPENCV,
        ratio: del.seconds / (cv.train_ms / 1000),
      },
      {
        name: `scale ${at}: recognise LBPH p50 (p95 ${lbph.p95.toFixed(0)} ms, ${lbph.measured}/${probes.length} with a face; POST /api/recognize of a ${SIDE}x${SIDE} photo; reference: predict() of its crop, p95 ${cv.predict_p95_ms.toFixed(1)} ms)`,
        unit: 'ms',
        lookout: lbph.p50,
        reference: cv.predict_p50_ms,
        referenceName: OPENCV,
        ratio: lbph.p50 / cv.predict_p50_ms,
      },
    ];
    if (embedding) {
      rows.push({
        name: `scale ${at}: recognise embedding p50 (p95 ${embedding.p95.toFixed(0)} ms, ${embedding.measured}/${probes.length} with a face)`,
        unit: 'ms',
        lookout: embedding.p50,
      });
    }
    rows.push(
      {
        name: `scale ${at}: model files on disk (DATA_DIR/models; features beside the images ${t(mb(featureBytes))} MB; reference: its training.yml)`,
        unit: 'MB',
        lookout: mb(onDisk),
        reference: mb(cv.yml_bytes),
        referenceName: OPENCV,
        ratio: onDisk / cv.yml_bytes,
      },
      {
        name: `scale ${at}: browser download, LBPH (${t(mb(described.lbph.bytes ?? 0))} MB described, sent ${lbphWire?.encoding ?? '-'})`,
        unit: 'MB',
        lookout: mb(lbphWire?.bytes ?? 0),
        goal: 'at 3,000 photos <= 20 MB',
      },
      {
        name: `scale ${at}: browser download, embedding (${t(mb(described.embedding.bytes ?? 0))} MB described, sent ${embeddingWire?.encoding ?? '-'})`,
        unit: 'MB',
        lookout: mb(embeddingWire?.bytes ?? 0),
        goal: 'at 3,000 photos <= 4 MB',
      },
      ...(compact
        ? [
            {
              name: `scale ${at}: browser download, compact LBPH segments (GET /api/models/trained/compact, every segment)`,
              unit: 'MB',
              lookout: mb(compact.lbph),
              goal: 'at 3,000 photos <= 20 MB',
            },
            {
              name: `scale ${at}: browser download, compact embedding segments`,
              unit: 'MB',
              lookout: mb(compact.embedding),
              goal: 'at 3,000 photos <= 4 MB',
            },
          ]
        : []),
      {
        name: `scale ${at}: server RSS after the full training (peak so far ${Math.round(afterFull.VmHWM / 1024)} MB)`,
        unit: 'MB',
        lookout: afterFull.VmRSS / 1024,
      },
      {
        name: `scale ${at}: server peak RSS in the retrain after adding 1 person (VmHWM${peakReset ? ', reset before it' : ', since start'})`,
        unit: 'MB',
        lookout: retrain.VmHWM / 1024,
      },
    );
    return rows;
  } finally {
    if (server) await stop(server.child);
    if (!process.env.SCALE_KEEP) await fs.rm(work, { recursive: true, force: true });
    else console.log(`scale ${photos}: kept ${work}`);
  }
}

export async function benchScale(repoRoot: string): Promise<BenchRow[]> {
  // Hours at its default sizes: only when asked for by name, not in a whole `npm run bench`.
  if (!process.argv.slice(2).includes('scale')) {
    console.log('scale: skipped (run it by name: npm run bench scale; SCALE_SIZES=100,1000 for smaller galleries)');
    return [];
  }
  const faces = await sources(repoRoot);
  console.log(`scale: ${faces.length} test faces of at least 90 px; sizes ${SIZES.join(', ')} photos`);
  const rows: BenchRow[] = [];
  for (const photos of SIZES) rows.push(...(await measure(repoRoot, faces, photos)));
  return rows;
}
