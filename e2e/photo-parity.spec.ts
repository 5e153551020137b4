/**
 * One photo, one answer (#18 item 3): a group photo analysed in this browser and on the server gives the same face
 * boxes. Chromium and sharp decode the JPEG to the same pixels; what differed was the copy sent to the server, a
 * JPEG re-encoded at quality 0.9, in which the cascade found an eighth "face" (sample5.jpg: 7 in the browser, 8 on
 * the server). A photo now goes up losslessly (lib/analyze.ts, serverImage).
 */
import fs from 'node:fs';
import path from 'node:path';
import { checkAccessibility, expect, test, type Page } from './helpers/fixtures.js';
import { screenshot, startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';

const GROUP_PHOTO = path.join(TESTDATA, 'faces/sample5.jpg');

let lookout: Lookout;
test.beforeAll(async () => {
  lookout = await startLookout();
});
test.afterAll(async () => {
  await lookout?.close();
});

type Box = [number, number, number, number];
const sorted = (boxes: Box[]) => [...boxes].sort((a, b) => a[0] - b[0] || a[1] - b[1]);

/** Analyses the photo on the Live recognition page where it is set to run, and reads the boxes from the face list. */
async function boxesOnPage(page: Page, place: 'browser' | 'server'): Promise<Box[]> {
  await page.addInitScript(`localStorage.setItem('lookout.place.recognize', '${place}');`);
  await page.goto(`${lookout.url}/recognize`);
  await page.getByRole('radio', { name: 'Photo' }).check();
  await page.getByLabel('Upload a photo').setInputFiles(GROUP_PHOTO);
  // The heading counts the faces once the result is in (the in-browser engine loads its models first).
  await expect(page.getByRole('heading', { name: /^Faces found \(\d+\)$/ })).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('analysed-on')).toContainText(place === 'server' ? 'The Lookout server' : 'This device');
  const boxes = await page.getByTestId('face-result').evaluateAll((els) => els.map((el) => el.getAttribute('data-box')));
  return sorted(boxes.map((b) => b!.split(',').map(Number) as Box));
}

test('the same photo gives the same faces in this browser and on the server', async ({ page, context }) => {
  const inBrowser = await boxesOnPage(page, 'browser');
  await checkAccessibility(page, 'recognize-parity-browser');
  await screenshot(page, 'recognize-parity-browser-desktop');

  const serverPage = await context.newPage();
  const sent: string[] = [];
  serverPage.on('request', (r) => {
    if (new URL(r.url()).pathname === '/api/recognize') sent.push((r.postDataJSON() as { image: string }).image.slice(0, 22));
  });
  const onServer = await boxesOnPage(serverPage, 'server');
  await screenshot(serverPage, 'recognize-parity-server-desktop');

  // The file itself, decoded by the server (sharp): the same boxes again.
  const res = await fetch(`${lookout.url}/api/recognize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ image: fs.readFileSync(GROUP_PHOTO).toString('base64') }),
  });
  expect(res.status).toBe(200);
  const direct = sorted(
    ((await res.json()) as { faces: { x: number; y: number; w: number; h: number }[] }).faces.map((f) => [f.x, f.y, f.w, f.h]),
  );

  expect(inBrowser).toHaveLength(7);
  expect(onServer).toEqual(inBrowser);
  expect(direct).toEqual(inBrowser);
  expect(sent).toEqual(['data:image/png;base64,']);
});
