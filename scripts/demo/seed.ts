/**
 * Sample people for the demo's fresh server, uploaded through the API and trained, as a site's first day would
 * look: each from one licensed test photo (test/fixtures/images/SOURCES.md), as the captures a person would take
 * of it (bench/captures.ts: re-encoded, mirrored, lighter, darker).
 */
import fs from 'node:fs';
import path from 'node:path';
import { captureVariations } from '../../bench/captures.js';
import { TESTDATA } from '../../e2e/helpers/lookout.js';

export const SAMPLE_PEOPLE: readonly { label: string; photo: string }[] = [
  { label: 'eileen-collins', photo: 'faces/astronaut.png' },
  { label: 'lionel-messi', photo: 'faces/messi5.jpg' },
];

async function ok(res: Response, what: string): Promise<Response> {
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${await res.text()}`);
  return res;
}

/** Uploads and trains the sample people; returns the labels the trained model knows. */
export async function seedSamplePeople(baseUrl: string): Promise<string[]> {
  for (const person of SAMPLE_PEOPLE) {
    const captures = await captureVariations(fs.readFileSync(path.join(TESTDATA, person.photo)));
    for (const [i, bytes] of captures.entries()) {
      const form = new FormData();
      form.set('label', person.label);
      form.set('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `sample-${i}.jpg`);
      await ok(await fetch(`${baseUrl}/api/images`, { method: 'POST', body: form }), `uploading ${person.label}`);
    }
  }
  const train = await ok(
    await fetch(`${baseUrl}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
    'training the sample people',
  );
  return ((await train.json()) as { labels: string[] }).labels;
}

/** Waits until the server's object detector has loaded (it loads in the background after start). */
export async function objectDetectorSettled(baseUrl: string, timeoutMs = 60_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = (await (await fetch(`${baseUrl}/api/ready`)).json()) as { object_detection_state?: string };
    const state = ready.object_detection_state ?? 'unknown';
    if (state !== 'loading') return state;
    if (Date.now() > deadline) throw new Error('the object detector did not finish loading');
    await new Promise((r) => setTimeout(r, 250));
  }
}
