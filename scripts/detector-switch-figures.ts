/**
 * #29 §5 measurement: does a model trained with one detection method recognise with the other? Lookout with the
 * project's own KServe V2 model server (server/model-server, FaceBoxes behind face-detection-retail-0005's contract)
 * on 127.0.0.1: three people of the licensed photos (4 captures each), trained with `local` (Haar cascade) and then
 * with `remote`; each probe (the photo, a 0.7x rescale, its mirror) recognised with both methods and both
 * recognizers. Prints each face's label and distance, and the two detectors' boxes of the same face.
 *
 *   npx tsx scripts/detector-switch-figures.ts
 */
import sharp from 'sharp';
import { listenModelServer } from '../server/model-server/app.js';
import { base64, PEOPLE, type Person, photo, rescaled, trainingCaptures } from '../test/helpers/faces.js';
import { startTestServer } from '../test/helpers/test-server.js';

type Face = { x: number; y: number; w: number; h: number; label: string; distance?: number };

// biome-ignore lint/suspicious/noExplicitAny: the answers are read field by field, as printed
async function json(url: string, method: string, body?: unknown): Promise<any> {
  const res = await fetch(url, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const parsed = await res.json();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(parsed)}`);
  return parsed;
}

const people = Object.keys(PEOPLE) as Person[];

async function probes(): Promise<{ name: string; person: Person; bytes: Buffer }[]> {
  const out: { name: string; person: Person; bytes: Buffer }[] = [];
  for (const person of people) {
    out.push({ name: `${person} photo`, person, bytes: await photo(person) });
    out.push({ name: `${person} 0.7x`, person, bytes: await rescaled(person, 0.7) });
    out.push({
      name: `${person} mirror`,
      person,
      bytes: await sharp(await photo(person))
        .flop()
        .jpeg({ quality: 90 })
        .toBuffer(),
    });
  }
  return out;
}

/** The largest face of an answer. */
function largest(faces: Face[]): Face | undefined {
  return [...faces].sort((a, b) => b.w * b.h - a.w * a.h)[0];
}

async function main(): Promise<void> {
  const modelServer = await listenModelServer({ port: 0, host: '127.0.0.1' });
  const server = await startTestServer({
    WORKERS: '1',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    SIGHTINGS_ENABLED: 'false',
    REMOTE_DETECTOR_URL: modelServer.url,
    REMOTE_DETECTOR_CHECK_INTERVAL_MS: '200',
  });
  const api = (p: string) => `${server.url}/api${p}`;
  try {
    for (let i = 0; ; i++) {
      if ((await json(api('/ready'), 'GET')).remote_status === 'connected') break;
      if (i > 300) throw new Error('the model server did not connect');
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const person of people) {
      for (const capture of await trainingCaptures(person)) {
        await json(api('/images'), 'POST', { label: person, image: base64(capture) });
      }
    }
    const list = await probes();
    // The two detectors' boxes of the same face.
    const boxes: Record<string, Record<string, Face | undefined>> = {};
    for (const method of ['local', 'remote'] as const) {
      await json(api('/models/detection'), 'PUT', { detection_method: method });
      for (const p of list) {
        const found = largest((await json(api('/recognize'), 'POST', { image: base64(p.bytes) })).faces);
        boxes[p.name] = { ...boxes[p.name], [method]: found };
      }
    }
    console.log('box geometry (remote relative to local): centre dx/w, dy/h, width ratio, height ratio');
    for (const p of list) {
      const { local: l, remote: r } = boxes[p.name];
      if (!l || !r) {
        console.log(`  ${p.name}: local ${l ? 'found' : 'none'}, remote ${r ? 'found' : 'none'}`);
        continue;
      }
      const dx = (r.x + r.w / 2 - (l.x + l.w / 2)) / l.w;
      const dy = (r.y + r.h / 2 - (l.y + l.h / 2)) / l.h;
      console.log(
        `  ${p.name}: local ${l.w}x${l.h} remote ${r.w}x${r.h}  dx ${dx.toFixed(3)} dy ${dy.toFixed(3)} w ${(r.w / l.w).toFixed(3)} h ${(r.h / l.h).toFixed(3)}`,
      );
    }
    for (const trainedWith of ['local', 'remote'] as const) {
      await json(api('/models/detection'), 'PUT', { detection_method: trainedWith });
      const trained = await json(api('/train'), 'POST', {});
      console.log(`\ntrained with ${trainedWith}: ${trained.total_faces} faces of ${trained.total_labels} people`);
      for (const recognizer of ['lbph', 'embedding'] as const) {
        for (const method of ['local', 'remote'] as const) {
          await json(api('/models/detection'), 'PUT', { detection_method: method });
          let right = 0;
          const distances: string[] = [];
          for (const p of list) {
            const answer = await json(api('/recognize'), 'POST', { image: base64(p.bytes), recognition_model: recognizer });
            const face = largest(answer.faces);
            if (face?.label === p.person) right++;
            distances.push(`${p.name}: ${face ? `${face.label} ${face.distance?.toFixed(1) ?? '-'}` : 'no face'}`);
          }
          console.log(`  ${recognizer}, recognised with ${method}: ${right}/${list.length} named right`);
          for (const d of distances) console.log(`    ${d}`);
        }
      }
    }
  } finally {
    await server.close().catch((err) => console.error(String(err)));
    await modelServer.close();
  }
}

await main();
