/**
 * Facial features in the browser engine (issue #19 item 3): `recognize` with `features: true` in the engine worker
 * must give, for the same photo, exactly the features of the server's chat analysis (the same shared module on the
 * same gray pixels: PNG always, JPEG too, as Chromium and sharp both decode with libjpeg-turbo), and fetch the three
 * cascades from /models/ only when features are asked for. The server's language model is the OpenAI-compatible
 * TEST DOUBLE from test/helpers/openai-double.ts.
 */
import { expect, test } from './helpers/fixtures.js';
import type { ChatFace } from '../shared/api/index.js';
import { startOpenAIDouble, type OpenAIDouble } from '../test/helpers/openai-double.js';
import { CHROMIUM_PATH } from './helpers/browser.js';
import { mimeOf, openEnginePage, testImage, watchEngineApiCalls } from './helpers/engine-page.js';
import { startLookout, type Lookout } from './helpers/lookout.js';

test.use({ launchOptions: { executablePath: CHROMIUM_PATH } });

const PHOTOS = ['faces/astronaut.png', 'faces/grace_hopper.jpg'];
const CASCADES = /\/models\/haarcascade_(eye|eye_tree_eyeglasses|smile)\.xml$/;
// The eye cascade also aligns faces before LBPH (shared/vision/eye-alignment.ts), so the engine loads it at start.
const FEATURES_ONLY = /\/models\/haarcascade_(eye_tree_eyeglasses|smile)\.xml$/;

let double: OpenAIDouble;
let lookout: Lookout;
const server = new Map<string, ChatFace[]>();

// biome-ignore lint/correctness/noEmptyPattern: Playwright requires the fixtures argument to be an object pattern, and this hook needs none
test.beforeAll(async ({}, testInfo) => {
  testInfo.setTimeout(120_000);
  double = await startOpenAIDouble();
  lookout = await startLookout({ CHAT_ENDPOINT: double.url, OBJECT_DETECTION_ENABLED: 'false' });
  for (const photo of PHOTOS) {
    const res = await fetch(`${lookout.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Describe the people', image: testImage(photo).toString('base64') }),
    });
    const body = (await res.json()) as { analysis: { count: number; faces: ChatFace[] } };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.analysis.count).toBe(1);
    server.set(photo, body.analysis.faces);
  }
  // Worth comparing: Eileen Collins smiles, Grace Hopper wears eyeglasses.
  expect(server.get('faces/astronaut.png')![0].features).toMatchObject({ smiling: true, eyes: 2 });
  expect(server.get('faces/grace_hopper.jpg')![0].features).toMatchObject({ eyeglasses: true, eyes: 2 });
});

test.afterAll(async () => {
  await lookout?.close();
  await double?.close();
});

type Recognized = { faces: ChatFace[]; timing: { featuresMs?: number } };

test("the engine worker gives the server chat analysis' features, loading the cascades only when asked", async ({ page }) => {
  const watch = watchEngineApiCalls(page, lookout.url);
  const engine = await openEnginePage(page, lookout.url);
  await engine.initWith({ backend: 'wasm', cascadeThreads: 1 });
  const recognize = (photo: string, features: boolean) =>
    page.evaluate(
      ([b64, type, f]) =>
        (
          globalThis as unknown as {
            lookoutEngine: {
              recognizeFile(b: string, t: string, o: { recognition_model: 'lbph'; features: boolean }): Promise<Recognized>;
            };
          }
        ).lookoutEngine.recognizeFile(b64, type, { recognition_model: 'lbph', features: f }),
      [testImage(photo).toString('base64'), mimeOf(photo), features] as const,
    );

  const plain = await recognize('faces/astronaut.png', false);
  expect(plain.faces).toHaveLength(1);
  expect(plain.faces[0].features).toBeUndefined();
  expect(watch.paths.filter((p) => FEATURES_ONLY.test(p))).toEqual([]);
  expect(watch.paths).toContain('/models/haarcascade_eye.xml');

  for (const photo of PHOTOS) {
    const got = await recognize(photo, true);
    const want = server.get(photo)!;
    expect(
      got.faces.map(({ x, y, w, h, features }) => ({ x, y, w, h, features })),
      photo,
      // `profile_face` is the server's alone (its profile cascade is not sent to browsers).
    ).toEqual(want.map(({ x, y, w, h, features: { profile_face: _, ...features } }) => ({ x, y, w, h, features })));
    expect(got.timing.featuresMs).toBeGreaterThanOrEqual(0);
  }
  // Each cascade fetched once from this server (the eye cascade only at start: the features reuse the engine's);
  // nothing went to the server's engines.
  expect(watch.paths.filter((p) => CASCADES.test(p)).sort()).toEqual([
    '/models/haarcascade_eye.xml',
    '/models/haarcascade_eye_tree_eyeglasses.xml',
    '/models/haarcascade_smile.xml',
  ]);
  expect(watch.calls).toEqual([]);
  expect(watch.foreign).toEqual([]);
});

test('the chat page shows each face\'s features under "What Lookout found"', async ({ page }) => {
  await page.goto(`${lookout.url}/chat`);
  await page.getByLabel('Your question').fill('Is the person wearing glasses?');
  await page
    .getByLabel('Attach photo')
    .setInputFiles({ name: 'grace.jpg', mimeType: 'image/jpeg', buffer: testImage('faces/grace_hopper.jpg') });
  await expect(page.getByRole('img', { name: 'Photo to send: grace.jpg' })).toBeVisible();
  await page.getByRole('button', { name: 'Send' }).click();
  const analysis = page.getByTestId('chat-reply').last().getByTestId('chat-analysis');
  await expect(analysis).toContainText('(1 face');
  await analysis.getByText('What Lookout found in the photo').click();
  // The page sends the photo re-encoded (components/chat/attachment.ts), so the exact facts may differ from the
  // file's: the page must show what the language model was told.
  const shown = analysis.getByTestId('chat-face-features');
  await expect(shown).toHaveText(/^ ?\(eyes seen: [0-2]; smiling: (yes|no); eyeglasses: (yes|no)\)$/);
  const facts = (await shown.textContent())!.trim().slice(1, -1);
  await expect(page.getByTestId('chat-reply').last()).toHaveAttribute('data-state', 'done');
  const prompt = (double.completions().at(-1)!.body as { messages: { role: string; content: string }[] }).messages.at(-1)!.content;
  expect(prompt).toContain(facts);
  expect(prompt).toContain('Is the person wearing glasses?');
});
