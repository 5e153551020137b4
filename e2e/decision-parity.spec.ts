/**
 * Issue #25, "server and browser give the same names, candidates and reasons for the same photo": one photo of an
 * enrolled person and a group photo of strangers, analysed in this browser and on the server, with LBPH and with
 * the embedding recognizer on faceres-1024 descriptors. Each face's box, name, certainty, reason and nearest person
 * must agree (scores may differ in the last decimal: float arithmetic of two tfjs backends).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { captureVariations } from '../bench/captures.js';
import { encodeEmbeddingFile } from '../shared/embedding/model-file.js';
import { openEnginePage } from './helpers/engine-page.js';
import { expect, type Page, test } from './helpers/fixtures.js';
import { startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

test.describe.configure({ mode: 'serial' });

const PEOPLE = { grace: 'faces/grace_hopper.jpg', eileen: 'faces/astronaut.png' };
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-parity-'));
/** PNG: the browser and the server decode it to the same pixels. */
const QUERY = path.join(tmp, 'grace-again.png');
const GROUP = path.join(tmp, 'group.png');
const grace = path.join(TESTDATA, PEOPLE.grace);
fs.writeFileSync(
  QUERY,
  await sharp(grace)
    .resize(Math.round((await sharp(grace).metadata()).width! * 0.8))
    .modulate({ brightness: 1.08 })
    .png()
    .toBuffer(),
);
fs.writeFileSync(GROUP, await sharp(path.join(TESTDATA, 'faces/sample5.jpg')).png().toBuffer());

test.afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** One face as the page shows it, or as the server's answer says it, in the same words. */
interface Seen {
  box: string;
  tone: string;
  name: string;
  reason: string | null;
  nearest: string | null;
}

type ServerFace = {
  x: number;
  y: number;
  w: number;
  h: number;
  label: string;
  certainty?: string;
  reason?: string;
  candidate?: { label: string };
};

const byBox = (a: Seen, b: Seen) => a.box.localeCompare(b.box);

function fromServer(f: ServerFace): Seen {
  const known = f.label !== 'unknown';
  const tone = !known ? 'unknown' : f.certainty === 'unsure' ? 'unsure' : 'named';
  return {
    box: `${f.x},${f.y},${f.w},${f.h}`,
    tone,
    name: tone === 'unsure' ? `probably ${f.label}` : f.label,
    reason: known ? null : (f.reason ?? 'no_match'),
    nearest: known ? null : (f.candidate?.label ?? null),
  };
}

async function onPage(page: Page, lookout: Lookout, place: 'browser' | 'server', photo: string): Promise<Seen[]> {
  await page.addInitScript(`localStorage.setItem('lookout.place.recognize', '${place}');`);
  await page.goto(`${lookout.url}/recognize`);
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(photo);
  await expect(page.getByRole('heading', { name: /^Faces found \(\d+\)$/ })).toBeVisible({ timeout: 90_000 });
  await expect(page.getByTestId('analysed-on')).toContainText(place === 'server' ? 'The Lookout server' : 'This device');
  const seen = await page.getByTestId('face-result').evaluateAll((els) =>
    els.map((el) => ({
      box: el.getAttribute('data-box') ?? '',
      tone: el.getAttribute('data-tone') ?? '',
      name: el.querySelector('.face-label')?.textContent ?? '',
      reason: el.querySelector('[data-testid="face-reason"]')?.getAttribute('data-reason') ?? null,
      nearest: /^nearest: (.+), \d+%$/.exec(el.querySelector('[data-testid="face-candidate"]')?.textContent ?? '')?.[1] ?? null,
    })),
  );
  return seen.sort(byBox);
}

async function direct(lookout: Lookout, photo: string): Promise<Seen[]> {
  const res = await fetch(`${lookout.url}/api/recognize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ image: fs.readFileSync(photo).toString('base64') }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { faces: ServerFace[] }).faces.map(fromServer).sort(byBox);
}

async function enrol(lookout: Lookout): Promise<void> {
  for (const [label, file] of Object.entries(PEOPLE)) {
    for (const [i, bytes] of (await captureVariations(fs.readFileSync(path.join(TESTDATA, file)))).entries()) {
      const form = new FormData();
      form.set('label', label);
      form.set('file', new Blob([bytes], { type: 'image/jpeg' }), `capture-${i}.jpg`);
      const res = await fetch(`${lookout.url}/api/images`, { method: 'POST', body: form });
      expect(res.status, await res.text()).toBe(200);
    }
  }
}

const SETUPS: { name: string; env: Record<string, string>; recognizer: string }[] = [
  { name: 'LBPH', env: { RECOGNITION_MODEL: 'lbph' }, recognizer: 'lbph' },
  {
    name: 'embedding (faceres-1024)',
    env: { RECOGNITION_MODEL: 'embedding', EMBEDDING_DESCRIPTOR: 'faceres-1024' },
    recognizer: 'embedding',
  },
];

for (const setup of SETUPS) {
  test.describe(setup.name, () => {
    let lookout: Lookout;
    test.beforeAll(async () => {
      test.setTimeout(180_000);
      lookout = await startLookout(setup.env);
      // The embedding nets load in the background after start: train once they are in.
      await expect
        .poll(
          async () => {
            const r = (await (await fetch(`${lookout.url}/api/models/available`)).json()) as {
              recognition_models: { name: string; available: boolean }[];
            };
            return r.recognition_models.find((m) => m.name === setup.recognizer)?.available;
          },
          { timeout: 120_000 },
        )
        .toBe(true);
      await enrol(lookout);
      const train = await fetch(`${lookout.url}/api/train`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const body = await train.text();
      expect(train.status, body).toBe(200);
      expect((JSON.parse(body) as { recognizers_trained?: string[] }).recognizers_trained ?? [setup.recognizer]).toContain(
        setup.recognizer,
      );
    });
    test.afterAll(async () => {
      await lookout?.close();
    });

    for (const [what, photo] of [
      ['an enrolled person', QUERY],
      ['a group of strangers', GROUP],
    ] as const) {
      test(`${what}: the same names, certainty, reasons and nearest people in this browser and on the server`, async ({
        page,
        context,
      }) => {
        test.setTimeout(180_000);
        const server = await direct(lookout, photo);
        expect(server.length).toBeGreaterThan(0);
        // Her new photo: named, or at least she is the nearest.
        if (photo === QUERY) expect(server[0].name.endsWith('grace') || server[0].nearest === 'grace', JSON.stringify(server)).toBe(true);
        const serverPage = await context.newPage();
        expect(await onPage(serverPage, lookout, 'server', photo)).toEqual(server);
        const fetched: string[] = [];
        // The context's requests: the engine worker's (and the service worker's) too.
        context.on('request', (r) => fetched.push(new URL(r.url()).pathname));
        expect(await onPage(page, lookout, 'browser', photo)).toEqual(server);
        if (setup.recognizer === 'embedding') {
          // The browser computes the descriptors of the model the server runs (and trained with): that model's net.
          const t = (await (await fetch(`${lookout.url}/api/models/thresholds`)).json()) as { embedding: { descriptor_model?: string } };
          const net =
            t.embedding.descriptor_model === 'faceres-1024'
              ? '/models/faceres.json'
              : '/models/face-api/face_recognition_model-weights_manifest.json';
          expect(fetched.filter((p) => p.startsWith('/models/'))).toContain(net);
        }
      });
    }
  });
}

test('an embedding model of faceres-1024 descriptors makes the browser engine compute faceres descriptors', async ({ page }) => {
  test.setTimeout(180_000);
  const lookout = await startLookout();
  try {
    const engine = await openEnginePage(page, lookout.url);
    await engine.init('wasm', { embedding: false, objects: false });
    // One person's template of unit 1024-d vectors (any will do: what is checked is which net the engine runs).
    const dim = 1024;
    const descriptors = new Float32Array(dim * 2).map((_, i) => (i % 7 === 0 ? 0.1 : 0.02));
    const json = encodeEmbeddingFile({ dim, descriptors, labels: Int32Array.from([0, 0]) }, [{ label: 0, name: 'someone' }], {
      descriptor: 'faceres-1024',
    });
    const fetched: string[] = [];
    page.on('request', (r) => fetched.push(new URL(r.url()).pathname));
    await engine.setModel({ embeddingsJson: json });
    const r = await engine.recognizeFile('faces/grace_hopper.jpg', 'embedding');
    expect(r.faces).toHaveLength(1);
    // Measured against the 1024-d template: a finite distance, and the person as the nearest (or named).
    const face = r.faces[0];
    expect(face.label === 'someone' || face.candidate?.label === 'someone', JSON.stringify(face)).toBe(true);
    expect(fetched).toContain('/models/faceres.json');
  } finally {
    await lookout.close();
  }
});
