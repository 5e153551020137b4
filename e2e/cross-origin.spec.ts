/**
 * Other web pages cannot drive Lookout through a kiosk's browser (issue 16, items 1 and 2), shown with real
 * Chromium pages against the real server:
 *
 * - CSRF: a page of another origin (a second HTTP server on another 127.0.0.1 port, so `same-site`, and the same
 *   page under another name, `cross-site`) posts a text/plain JSON form, a multipart form with a photo, no-cors
 *   fetches (train, results, upload), a cross-origin DELETE and a read; the server refuses each (403 or a refused
 *   preflight) and nothing in DATA_DIR changes.
 * - DNS rebinding: `rebind.test` resolves to 127.0.0.1 (--host-resolver-rules); its page, first served by "the
 *   attacker" (a routed answer, as before the DNS answer flips), reads and deletes through same-origin requests
 *   that really reach the server, which answers 421 for that Host: nothing read, nothing deleted.
 * - Controls: the same requests from the server's own page succeed, so the refusals are the rules at work.
 * - The app runs under its Content-Security-Policy: the pages, the in-browser engines (WASM with SIMD and
 *   threads, workers) and the API reference, with no violation reported.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { expect, skipAccessibilityCheck, test, type Page } from './helpers/fixtures.js';
import { CHROMIUM_PATH, fakeCameraArgs } from './helpers/browser.js';
import { openEnginePage, trainingCaptures, trainOnServer } from './helpers/engine-page.js';
import { makeFakeCamera } from './helpers/fake-camera.js';
import { startLookout, TESTDATA, type Lookout } from './helpers/lookout.js';
import { isDatabaseFile } from '../test/helpers/data-dir-files.js';

const PERSON = 'grace';
/** Names Chromium resolves to 127.0.0.1 itself: the attacker's page, and the name a rebinding points at us. */
const EVIL_HOST = 'evil.test';
const REBIND_HOST = 'rebind.test';

const camera = await makeFakeCamera('faces/grace_hopper.jpg');
test.use({
  launchOptions: {
    executablePath: CHROMIUM_PATH,
    args: [
      ...fakeCameraArgs(camera),
      `--host-resolver-rules=MAP ${EVIL_HOST} 127.0.0.1, MAP ${REBIND_HOST} 127.0.0.1`,
      // Chromium's own defence against rebinding (Private Network Access: a page it counts as public may not call
      // loopback) is off here: Firefox and Safari have none, so it is the server's Host check under test.
      '--disable-features=BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,LocalNetworkAccessChecks',
    ],
  },
});
test.describe.configure({ mode: 'serial' });

let lookout: Lookout;
let attacker: http.Server;
let attackerPort: number;

test.beforeAll(async () => {
  lookout = await startLookout({ OBJECT_DETECTION_ENABLED: 'false', EMBEDDING_ENABLED: 'false' });
  await trainOnServer(lookout, { [PERSON]: 'faces/grace_hopper.jpg' });
  // "Another site": any page at all; the attacks are run in its origin by page.evaluate.
  attacker = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html><head><title>Another site</title></head><body><h1>Win a prize</h1></body></html>');
  });
  await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
  attackerPort = (attacker.address() as AddressInfo).port;
});
test.afterAll(async () => {
  await new Promise((resolve) => attacker?.close(resolve));
  await lookout?.close();
});

/** Every file under DATA_DIR with its size and modification time: what a refused request must leave alone. */
function snapshot(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(lookout.dataDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    // The embedded database writes its log when it likes (a checkpoint): its rows are checked through the API.
    if (isDatabaseFile(path.relative(lookout.dataDir, file))) continue;
    const stat = fs.statSync(file);
    out[path.relative(lookout.dataDir, file)] = `${stat.size} ${stat.mtimeMs}`;
  }
  return out;
}

/**
 * `METHOD /path -> status` of every answer Lookout gave the page, its frames' form posts included. Chromium
 * withholds most of them from the page (CORS, CORP), and Playwright then reports only a failed request; the
 * DevTools protocol still has the status the server sent.
 */
async function watchAnswers(page: Page): Promise<string[]> {
  const answers: string[] = [];
  const cdp = await page.context().newCDPSession(page);
  // The two events of one request come in either order.
  const sent = new Map<string, string>();
  const status = new Map<string, number>();
  const join = (id: string) => {
    if (!sent.has(id) || !status.has(id)) return;
    answers.push(`${sent.get(id)} -> ${status.get(id)}`);
    sent.delete(id);
    status.delete(id);
  };
  cdp.on('Network.requestWillBeSent', (e) => {
    if (!e.request.url.startsWith(lookout.url)) return;
    sent.set(e.requestId, `${e.request.method} ${new URL(e.request.url).pathname}`);
    join(e.requestId);
  });
  cdp.on('Network.responseReceivedExtraInfo', (e) => {
    status.set(e.requestId, e.statusCode);
    join(e.requestId);
  });
  await cdp.send('Network.enable');
  return answers;
}

async function serverState(): Promise<{ labels: string[]; results: number }> {
  const labels = ((await (await fetch(`${lookout.url}/api/labels`)).json()) as { labels: string[] }).labels;
  const results = ((await (await fetch(`${lookout.url}/api/results`)).json()) as { count: number }).count;
  return { labels, results };
}

const RECORD = { id: 'csrf-00000001', kind: 'recognition', engine: 'browser', captured_at: '2024-01-01T00:00:00Z', faces: [] };

test('a page of another origin can neither change nor read anything (CSRF)', async ({ page }) => {
  skipAccessibilityCheck(page, "the page ends on the attacker's stand-in site, with the attack's own frames and forms");
  const before = snapshot();
  const answers = await watchAnswers(page);
  const photo = fs.readFileSync(path.join(TESTDATA, 'faces/messi5.jpg')).toString('base64');
  for (const site of [`http://127.0.0.1:${attackerPort}`, `http://${EVIL_HOST}:${attackerPort}`]) {
    answers.length = 0;
    await page.goto(`${site}/`);
    const outcome = await page.evaluate(
      async ([api, record, jpeg]) => {
        // In the page (e2e code compiles without the DOM's types, hence the loose `any`).
        const d = (globalThis as any).document;
        const submit = (action: string, enctype: string, fields: (form: any) => void) => {
          const frame = d.createElement('iframe');
          frame.name = `sink-${Math.random()}`;
          d.body.append(frame);
          const form = d.createElement('form');
          Object.assign(form, { method: 'POST', action, enctype, target: frame.name });
          fields(form);
          d.body.append(form);
          form.submit();
        };
        const input = (form: any, name: string, value: string) => {
          const i = d.createElement('input');
          Object.assign(i, { type: 'hidden', name, value });
          form.append(i);
        };
        const bytes = Uint8Array.from(atob(jpeg), (ch) => ch.charCodeAt(0));
        // The classic JSON CSRF: a text/plain form whose `name=value` is a JSON document.
        const json = JSON.stringify({ results: [record] });
        submit(`${api}/api/results`, 'text/plain', (f) => input(f, `${json.slice(0, -1)},"x":"`, '"}'));
        // A form upload with a photo (multipart: no preflight).
        submit(`${api}/api/images`, 'multipart/form-data', (f) => {
          input(f, 'label', 'mallory');
          const file = d.createElement('input');
          Object.assign(file, { type: 'file', name: 'file' });
          const dt = new (globalThis as any).DataTransfer();
          dt.items.add(new File([bytes], 'mallory.jpg', { type: 'image/jpeg' }));
          file.files = dt.files;
          f.append(file);
        });
        const quiet = (p: Promise<Response>) => p.then((r) => r.type).catch((e: Error) => `failed: ${e.name}`);
        const form = new FormData();
        form.set('label', 'mallory');
        form.set('file', new Blob([bytes], { type: 'image/jpeg' }), 'mallory.jpg');
        return {
          train: await quiet(fetch(`${api}/api/train`, { method: 'POST', mode: 'no-cors' })),
          results: await quiet(fetch(`${api}/api/results`, { method: 'POST', mode: 'no-cors', body: json })),
          upload: await quiet(fetch(`${api}/api/images`, { method: 'POST', mode: 'no-cors', body: form })),
          // Needs a preflight, which is refused: the DELETE itself is never sent.
          remove: await quiet(fetch(`${api}/api/images/grace`, { method: 'DELETE' })),
          read: await quiet(fetch(`${api}/api/labels`)),
        };
      },
      [lookout.url, RECORD, photo] as const,
    );
    // The page learns nothing (CORP keeps even the opaque answers from it); what the server did is below.
    expect(outcome, site).toEqual({
      train: 'failed: TypeError',
      results: 'failed: TypeError',
      upload: 'failed: TypeError',
      remove: 'failed: TypeError',
      read: 'failed: TypeError',
    });
    const expected = [
      'POST /api/results -> 403',
      'POST /api/images -> 403',
      'POST /api/train -> 403',
      'POST /api/results -> 403',
      'POST /api/images -> 403',
      'OPTIONS /api/images/grace -> 403',
      'GET /api/labels -> 403',
    ];
    await expect.poll(() => [...answers].sort(), { message: site }).toEqual([...expected].sort());
  }
  expect(snapshot()).toEqual(before);
  expect(await serverState()).toEqual({ labels: [PERSON], results: 0 });
});

test('a DNS-rebinding page reaches the server but is answered 421: nothing read, nothing deleted', async ({ page }) => {
  skipAccessibilityCheck(page, "the page ends on the attacker's stand-in page");
  const before = snapshot();
  const rebound = `http://${REBIND_HOST}:${lookout.port}`;
  // The page's first load comes from the attacker's server (the name still resolved to it then); everything
  // after goes to 127.0.0.1, to Lookout, as the same origin.
  await page.route(`${rebound}/`, (route) =>
    route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>rebound</title><h1>Loading...</h1>' }),
  );
  await page.goto(`${rebound}/`);
  const answers = await page.evaluate(async () => {
    const ask = async (path: string, init?: RequestInit) => {
      const res = await fetch(path, init);
      return { status: res.status, body: await res.text() };
    };
    return {
      labels: await ask('/api/labels'),
      images: await ask('/api/images/grace'),
      results: await ask('/api/results'),
      remove: await ask('/api/images/grace', { method: 'DELETE' }),
      train: await ask('/api/train', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
    };
  });
  for (const [what, answer] of Object.entries(answers)) {
    expect(answer.status, what).toBe(421);
    expect(JSON.parse(answer.body).error.code, what).toBe('host_not_allowed');
    expect(answer.body, what).not.toContain(`"${PERSON}"`);
  }
  expect(snapshot()).toEqual(before);
  expect((await serverState()).labels).toEqual([PERSON]);
});

test("the same requests from the server's own page work (the refusals above are the rules, not broken requests)", async ({ page }) => {
  await page.goto(`${lookout.url}/api/health`);
  const answers = await page.evaluate(async (record) => {
    const labels = await fetch('/api/labels');
    const results = await fetch('/api/results', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ results: [record] }),
    });
    return { labels: [labels.status, await labels.text()], results: results.status };
  }, RECORD);
  expect(answers.labels[0]).toBe(200);
  expect(answers.labels[1]).toContain(`"${PERSON}"`);
  expect(answers.results).toBe(200);
  expect((await serverState()).results).toBe(1);
});

test('the app, its in-browser engines and the API reference run under the CSP with no violation', async ({ page }) => {
  const violations: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy|Refused to|worker sent an error/i.test(msg.text())) violations.push(msg.text());
  });
  page.on('pageerror', (err) => violations.push(`page error: ${err.message}`));
  await page.addInitScript(
    "globalThis.__csp = []; document.addEventListener('securitypolicyviolation', (e) => globalThis.__csp.push(e.violatedDirective + ' ' + e.blockedURI));",
  );
  const reported = async () => [...violations, ...(await page.evaluate<string[]>('globalThis.__csp ?? []'))];

  const res = await page.goto(`${lookout.url}/`);
  expect(res?.headers()['content-security-policy']).toContain("'wasm-unsafe-eval'");
  await expect(page.getByRole('heading', { level: 1 })).toBeVisible();
  expect(await page.evaluate('crossOriginIsolated')).toBe(true);
  expect(await reported()).toEqual([]);

  // Live recognition in this browser: camera, workers, the cascade's WASM, tfjs; the trained person is named.
  await page.goto(`${lookout.url}/recognize`);
  await expect(page.getByTestId('engine-status')).toContainText(/Running in this browser/, { timeout: 60_000 });
  await expect(page.getByTestId('face-result').first()).toContainText(PERSON, { timeout: 60_000 });
  expect(await reported()).toEqual([]);

  // The engine's WASM backend with SIMD and threads (Emscripten's Blob workers) starts under the policy.
  const engine = await openEnginePage(page, lookout.url);
  const init = await engine.initWith({ backend: 'wasm', preload: { embedding: false, objects: false } });
  expect(init.backend.backend).toBe('wasm');
  expect(init.backend.crossOriginIsolated).toBe(true);
  expect(init.backend.wasm).toMatchObject({ simd: true, threads: true });
  expect(init.cascade.scan).toBe('simd');
  expect(await reported()).toEqual([]);

  // The API reference (Swagger UI from this server).
  await page.goto(`${lookout.url}/api/docs`);
  await expect(page.locator('.swagger-ui .info .title')).toContainText('Lookout API');
  await expect(page.locator('.opblock').first()).toBeVisible();
  expect(await reported()).toEqual([]);
});

test('the threaded WASM backend keeps only the pthread workers it computes on (#38 part 3)', async ({ page }) => {
  test.setTimeout(120_000);
  const engine = await openEnginePage(page, lookout.url);
  const init = await engine.initWith({ backend: 'wasm', preload: { embedding: true, objects: false } });
  expect(init.backend.wasm).toMatchObject({ simd: true, threads: true });
  expect(init.embedding).toEqual({ loaded: true });
  // Every core up to 4 computes (2 on a 2-core device): fewer pool workers must not mean fewer threads.
  const cores = await page.evaluate<number>('navigator.hardwareConcurrency');
  expect(init.backend.wasm?.threadsCount).toBe(Math.max(1, Math.min(4, cores)));
  // The descriptor net runs on those threads: a model trained in the browser from one person's captures.
  const captures = await trainingCaptures('faces/grace_hopper.jpg');
  const trained = await engine.trainFiles(captures.map((bytes) => ({ label: PERSON, bytes, type: 'image/jpeg' })));
  expect(trained.recognizers_trained).toEqual(['lbph', 'embedding']);
  // Emscripten's pthreads are the Blob workers (the engine and cascade workers are the app's own files): one
  // for each thread besides the engine worker's own, not the build's fixed pool of 8.
  const pthreads = () => page.workers().filter((w) => w.url().startsWith('blob:')).length;
  await expect.poll(pthreads, { timeout: 2_000 }).toBe(Math.max(1, init.backend.wasm!.threadsCount - 1));
});
