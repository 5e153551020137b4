/**
 * Issue #26 sightings from the in-browser engine, through the pages a person uses: the Live recognition page runs
 * the shared/ engines in this browser (never calling /api/recognize), names the trained person on the fake camera and
 * calls a stranger's photo unknown; the results it syncs (POST /api/results) carry each face's crop (a JPEG of at
 * most 160 px) and the trained models version they were made with, and the server keeps them as sightings of source
 * `browser`: listed by GET /api/sightings with a crop to fetch, and shown on the Faces page (the stranger as a group of unknown faces, the person under her name).
 */
import sharp from 'sharp';
import { expect, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import { trainOnServer, waitForEmbedding } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const PERSON = 'grace';
const STRANGER = 'faces/astronaut.png';
const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({ launchOptions: { executablePath: CHROMIUM_PATH, args: fakeCameraArgs(camera) } });
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false' });
  // The server describes the crops it is sent (the Faces page groups unknown faces by their descriptors).
  await waitForEmbedding(lookout);
  await trainOnServer(lookout, { [PERSON]: 'faces/grace_hopper.jpg' });
});
test.afterAll(async () => {
  await lookout?.close();
});

interface Sighting {
  id: string;
  source: string;
  label: string | null;
  recognizer: string;
  model_version: string | null;
  box: { x: number; y: number; w: number; h: number };
  crop_url: string;
}

async function sightings(query = 'source=browser'): Promise<Sighting[]> {
  const res = await fetch(`${lookout.url}/api/sightings?${query}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return ((await res.json()) as { sightings: Sighting[] }).sightings;
}

/** The faces of each result the page sends to POST /api/results. */
function watchSyncedFaces(page: Page): { label: string; crop?: string }[] {
  const faces: { label: string; crop?: string }[] = [];
  page.on('request', (r) => {
    if (r.method() !== 'POST' || new URL(r.url()).pathname !== '/api/results') return;
    const body = r.postDataJSON() as { results: { faces?: { label: string; crop?: string }[] }[] };
    for (const record of body.results) faces.push(...(record.faces ?? []));
  });
  return faces;
}

/** A sighting's crop, fetched as the Faces page does: a JPEG of at most 160 px. */
async function cropOf(s: Sighting): Promise<{ format?: string; width?: number; height?: number }> {
  const res = await fetch(`${lookout.url}${s.crop_url}`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/jpeg');
  return sharp(Buffer.from(await res.arrayBuffer())).metadata();
}

test('faces recognised in this browser come back as sightings of source browser, with their crops, on the Faces page', async ({ page }) => {
  const analysed: string[] = [];
  page.on('request', (r) => {
    const p = new URL(r.url()).pathname;
    if (p === '/api/recognize' || p === '/api/objects/detect') analysed.push(p);
  });
  const synced = watchSyncedFaces(page);

  // The live camera, in this browser: she is named, and the result is synced with her face's crop.
  await page.goto(`${lookout.url}/recognize`);
  await expect(page.getByRole('radio', { name: 'In this browser' })).toBeChecked();
  await expect(page.getByTestId('engine-status')).toContainText(/Running in this browser on (WebGPU|WebGL|WASM)/, { timeout: 60_000 });
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON, { timeout: 60_000 });
  await expect(page.getByTestId('analysed-on')).toContainText('This device');
  await expect.poll(() => synced.filter((f) => f.label === PERSON && f.crop).length, { timeout: 30_000 }).toBeGreaterThan(0);
  const sent = synced.find((f) => f.label === PERSON && f.crop)!;
  expect(Buffer.from(sent.crop!, 'base64').subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));

  // A stranger's photo on the same page, still in this browser: unknown, synced with its crop too.
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(`${TESTDATA}/${STRANGER}`);
  await expect(page.getByTestId('face-result').first()).toContainText('unknown', { timeout: 60_000 });
  await expect.poll(() => synced.filter((f) => f.label === 'unknown' && f.crop).length, { timeout: 30_000 }).toBeGreaterThan(0);
  await expect(page.getByTestId('sync-status')).toContainText('All synced', { timeout: 30_000 });
  expect(analysed).toEqual([]);

  // The server kept them as sightings of source `browser` (after the answer: polled), each with a crop.
  await expect
    .poll(async () => (await sightings()).map((s) => s.label ?? 'unknown').sort(), { timeout: 30_000 })
    .toEqual(expect.arrayContaining([PERSON, 'unknown']));
  const kept = await sightings();
  expect(kept.every((s) => s.source === 'browser')).toBe(true);
  const grace = kept.find((s) => s.label === PERSON)!;
  expect(grace.recognizer).toBe('lbph');
  // Made with the trained models the page downloaded: their version, as the server's own sightings say theirs.
  const trained = (await (await fetch(`${lookout.url}/api/models/trained`)).json()) as { version: string | null };
  expect(trained.version).not.toBeNull();
  expect(grace.model_version).toBe(trained.version);
  for (const s of [grace, kept.find((s) => s.label === null)!]) {
    const meta = await cropOf(s);
    expect(meta.format).toBe('jpeg');
    expect(Math.max(meta.width ?? 0, meta.height ?? 0)).toBeLessThanOrEqual(160);
    expect(Math.min(meta.width ?? 0, meta.height ?? 0)).toBeGreaterThan(20);
  }
  // The filters see them too: hers by name, the stranger's among the unknown ones.
  expect((await sightings(`source=browser&label=${PERSON}`)).length).toBeGreaterThan(0);
  expect((await sightings('source=browser&unknown=true')).every((s) => s.label === null)).toBe(true);

  // The Faces page: the stranger is a group seen by the browser's own recognition, with the crop shown; she is under her name.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Faces' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Faces' })).toBeVisible();
  const group = page.getByTestId('faces-group');
  await expect(group.first()).toContainText('by a device that recognises faces itself', { timeout: 30_000 });
  await expect
    .poll(() =>
      group
        .first()
        .locator('img')
        .evaluateAll((imgs) => imgs.map((i) => (i as unknown as { naturalWidth: number }).naturalWidth > 0)),
    )
    .toContain(true);
  await page.getByLabel('Seen in').selectOption({ label: 'Last hour' });
  const person = page.locator(`[data-testid="faces-person"][data-label="${PERSON}"]`);
  await expect(person).toContainText(/Seen (once|\d+ times)/);
  await person.getByRole('button', { name: /Show faces/ }).click();
  const seen = person.getByTestId('faces-sighting').first();
  await expect(seen).toContainText('a device that recognises faces itself');
  await expect.poll(() => seen.locator('img').evaluate((i) => (i as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
});
