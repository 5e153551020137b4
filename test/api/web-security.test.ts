/**
 * Other web pages must not drive Lookout (issue 16, items 1 and 2), over real HTTP on 127.0.0.1: a Host that is
 * not the server's (DNS rebinding) is 421, a browser request from another origin 403, a state-changing body a
 * cross-site form could send 415, and none of them changes anything on disk; the security headers, the cache
 * policy of personal data, and 405 with Allow. The model server, the PPE detector and the processor's status
 * server refuse a foreign Host too. (e2e/cross-origin.spec.ts makes the same attacks from a real Chromium page.)
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenModelServer } from '../../server/model-server/app.js';
import { listenPpeServer } from '../../server/ppe-server/app.js';
import { errorStatusesOf } from '../../shared/api/route.js';
import { apiRoutes } from '../../shared/api/routes.js';
import { sizeTree } from '../helpers/data-dir-files.js';
import { startProcessor, tempDir } from '../helpers/processor-harness.js';
import { getJson, readTestImage, startTestServer, uploadImage, type TestServer } from '../helpers/test-server.js';

const KIOSK = 'https://kiosk.example.org';

let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer({
    WORKERS: '1',
    EMBEDDING_ENABLED: 'false',
    OBJECT_DETECTION_ENABLED: 'false',
    CHAT_ENABLED: 'false',
    ALLOWED_ORIGINS: KIOSK,
  });
  port = Number(new URL(server.url).port);
});
afterAll(async () => {
  await server?.close();
});

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json(): any;
}

/** A request with exactly these headers (fetch would replace Host with the URL's). */
function send(url: string, method: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: () => JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const resultsBody = JSON.stringify({
  results: [{ id: 'csrf-0001', kind: 'recognition', engine: 'browser', captured_at: new Date().toISOString(), faces: [] }],
});

function multipart(label: string, bytes: Uint8Array): FormData {
  const form = new FormData();
  form.set('label', label);
  form.set('file', new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'image/jpeg' }), 'x.jpg');
  return form;
}

describe('Host (DNS rebinding)', () => {
  it('refuses a page whose name is not the server, reading or deleting, with 421 and nothing read or deleted', async () => {
    expect((await uploadImage(server.url, 'grace', await readTestImage('faces/grace_hopper.jpg'))).status).toBe(200);
    const before = await sizeTree(server.dataDir);
    const host = `rebind.evil.example:${port}`;
    for (const [method, route] of [
      ['GET', '/api/labels'],
      ['GET', '/api/images/grace'],
      ['GET', '/api/results'],
      ['DELETE', '/api/images/grace'],
      ['POST', '/api/train'],
    ]) {
      const res = await send(`${server.url}${route}`, method, { host, 'sec-fetch-site': 'same-origin' });
      expect(res.status, `${method} ${route}`).toBe(421);
      expect(res.json().error.code).toBe('host_not_allowed');
      expect(res.text).not.toContain('grace');
    }
    expect(await sizeTree(server.dataDir)).toEqual(before);
    expect((await getJson(`${server.url}/api/labels`)).body.labels).toContain('grace');
  });

  it('answers localhost, the loopback addresses and any IP address (a probe by pod IP)', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `10.42.0.7:${port}`])
      expect((await send(`${server.url}/api/health`, 'GET', { host })).status, host).toBe(200);
  });
});

describe('Origin (cross-site requests)', () => {
  it('refuses the CSRF forms of another page: text/plain JSON, multipart upload, body-less train and delete', async () => {
    const before = await sizeTree(server.dataDir);
    const face = await readTestImage('faces/grace_hopper.jpg');
    for (const origin of ['http://evil.example', `http://127.0.0.1:${port + 1}`, 'null']) {
      const attempts: [string, RequestInit][] = [
        ['/api/results', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: resultsBody }],
        ['/api/results', { method: 'POST', headers: { 'content-type': 'application/json' }, body: resultsBody }],
        ['/api/images', { method: 'POST', body: multipart('mallory', face) }],
        ['/api/train', { method: 'POST' }],
        ['/api/images/grace', { method: 'DELETE' }],
      ];
      for (const [route, init] of attempts) {
        const res = await fetch(`${server.url}${route}`, {
          ...init,
          headers: { ...(init.headers as Record<string, string>), origin, 'sec-fetch-site': 'cross-site' },
        });
        expect(res.status, `${origin} ${init.method} ${route}`).toBe(403);
        expect(((await res.json()) as any).error.code).toBe('forbidden_origin');
      }
    }
    // A cross-site <img> or <script> load of an image or a list: no Origin, refused too.
    const img = await fetch(`${server.url}/api/labels`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-dest': 'image' } });
    expect(img.status).toBe(403);
    await img.text();
    expect(await sizeTree(server.dataDir)).toEqual(before);
    expect((await getJson(`${server.url}/api/results`)).body.count).toBe(0);
  });

  it("accepts the server's own page and a listed origin (with CORS), and programs that send no Origin", async () => {
    const post = (origin?: string) =>
      fetch(`${server.url}/api/results`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(origin ? { origin, 'sec-fetch-site': 'same-origin' } : {}) },
        body: resultsBody,
      });
    const own = await post(server.url);
    expect(own.status).toBe(200);
    await own.text();
    const listed = await post(KIOSK);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('access-control-allow-origin')).toBe(KIOSK);
    await listed.text();
    const program = await post();
    expect(program.status).toBe(200);
    await program.text();
    const preflight = await fetch(`${server.url}/api/results`, {
      method: 'OPTIONS',
      headers: { origin: KIOSK, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const refused = await fetch(`${server.url}/api/results`, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(refused.status).toBe(403);
    await refused.text();
  });

  it('lets a followed link open the app and the API reference from another site', async () => {
    // (Raw requests: Node's fetch always says `sec-fetch-mode: cors`.)
    for (const route of ['/', '/api/docs']) {
      const res = await send(`${server.url}${route}`, 'GET', {
        'sec-fetch-site': 'cross-site',
        'sec-fetch-mode': 'navigate',
        'sec-fetch-dest': 'document',
      });
      expect(res.status, route).toBe(200);
    }
  });
});

describe('body types of state-changing requests', () => {
  it('refuses text/plain, form-encoded and untyped bodies with 415, even from a program, and stores nothing', async () => {
    const before = await sizeTree(server.dataDir);
    for (const [route, type] of [
      ['/api/results', 'text/plain;charset=UTF-8'],
      ['/api/recognize', 'text/plain'],
      ['/api/images', 'application/x-www-form-urlencoded'],
      ['/api/train', 'text/plain'],
    ]) {
      const res = await send(`${server.url}${route}`, 'POST', { 'content-type': type }, resultsBody);
      expect(res.status, `${route} ${type}`).toBe(415);
      expect(res.json().error).toMatchObject({ code: 'unsupported_media_type' });
      expect(res.json().error.message).toMatch(/application\/json/);
    }
    const untyped = await send(`${server.url}/api/results`, 'POST', { 'content-length': String(resultsBody.length) }, resultsBody);
    expect(untyped.status).toBe(415);
    expect(await sizeTree(server.dataDir)).toEqual(before);
  });

  it('keeps body-less POST and DELETE working for programs', async () => {
    const train = await send(`${server.url}/api/train`, 'POST', {});
    expect([200, 422]).toContain(train.status);
    const del = await send(`${server.url}/api/images/nobody`, 'DELETE', {});
    expect(del.status).toBe(404);
    expect(del.json().error.code).toBe('label_not_found');
  });
});

describe('security headers', () => {
  it('serves the app and the API under a CSP the app runs with, no sniffing, no framing, no Referer', async () => {
    for (const route of ['/', '/api/health', '/api/docs', '/api/nothing']) {
      const res = await fetch(`${server.url}${route}`);
      await res.text();
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp, route).toContain("script-src 'self' 'wasm-unsafe-eval'");
      expect(csp).toContain("worker-src 'self' blob:");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("object-src 'none'");
      expect(csp).not.toMatch(/'unsafe-eval'|script-src[^;]*'unsafe-inline'/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      // The cross-origin isolation the in-browser engines need stays.
      expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(res.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    }
  });

  it('keeps personal data out of caches: no-store on faces, labels, images, results; the trained models private with their 304', async () => {
    const face = await readTestImage('faces/grace_hopper.jpg');
    const up = await uploadImage(server.url, 'ada', face);
    expect(up.status).toBe(200);
    const recognize = await fetch(`${server.url}/api/recognize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ image: face.toString('base64') }),
    });
    expect(recognize.headers.get('cache-control')).toBe('no-store');
    await recognize.text();
    for (const route of ['/api/labels', '/api/images/ada', `/api/images/ada/${up.body.filename}`, '/api/results', '/api/ppe/events']) {
      const res = await fetch(`${server.url}${route}`);
      expect(res.status, route).toBe(200);
      expect(res.headers.get('cache-control'), route).toBe('no-store');
      await res.arrayBuffer();
    }
    const train = await fetch(`${server.url}/api/train`, { method: 'POST' });
    expect(train.status).toBe(200);
    await train.text();
    for (const route of ['/api/models/trained', '/api/models/trained/lbph']) {
      const res = await fetch(`${server.url}${route}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control'), route).toBe('private, no-cache');
      const etag = res.headers.get('etag')!;
      await res.arrayBuffer();
      const again = await fetch(`${server.url}${route}`, { headers: { 'if-none-match': etag } });
      expect(again.status, route).toBe(304);
      expect(again.headers.get('cache-control')).toBe('private, no-cache');
    }
    // The reference holds nothing personal: its own caching stays.
    const css = await fetch(`${server.url}/api/docs/swagger-ui.css`);
    expect(css.headers.get('cache-control')).toBe('public, max-age=86400');
    await css.arrayBuffer();
  });
});

describe('405 for a method a path does not answer', () => {
  it('answers 405 with Allow where the path exists under other methods, and 404 where it does not', async () => {
    for (const [method, route, allow] of [
      ['GET', '/api/train', 'POST'],
      ['PUT', '/api/images/ada', 'GET, HEAD, DELETE'],
      ['POST', '/api/labels', 'GET, HEAD'],
      ['DELETE', '/api/models/config', 'GET, HEAD, PUT'],
      ['POST', '/', 'GET, HEAD'],
      ['POST', '/metrics', 'GET, HEAD'],
    ]) {
      const res = await fetch(`${server.url}${route}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: method === 'GET' ? undefined : '{}',
      });
      expect(res.status, `${method} ${route}`).toBe(405);
      expect(res.headers.get('allow')?.split(', ').sort(), `${method} ${route}`).toEqual(allow.split(', ').sort());
      expect(((await res.json()) as any).error.code).toBe('method_not_allowed');
    }
    const missing = await fetch(`${server.url}/api/nothing`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(missing.status).toBe(404);
    await missing.text();
  });
});

describe('the OpenAPI document', () => {
  it('documents 421 and 403 on every operation, and 415 on every one that changes state', async () => {
    const doc = (await getJson(`${server.url}/api/openapi.json`)).body;
    for (const [name, route] of Object.entries(apiRoutes)) {
      const op = doc.paths[`/api${route.path}`][route.method];
      expect(Object.keys(op.responses), name).toEqual(expect.arrayContaining(['403', '421']));
      if (route.method !== 'get') expect(Object.keys(op.responses), name).toContain('415');
      expect(errorStatusesOf(route).get(421)).toEqual(['host_not_allowed']);
    }
  });
});

describe('the other processes a browser could reach', () => {
  it('the model server and the PPE detector refuse a foreign Host (421) and another page (403), in their own error body', async () => {
    const model = await listenModelServer({ loadBackend: () => Promise.reject(new Error('no weights here')) });
    const ppe = await listenPpeServer({ modelPath: '/nonexistent/best.onnx' });
    try {
      for (const [url, route] of [
        [model.url, '/v2/health/live'],
        [ppe.url, '/health'],
      ]) {
        const ok = await send(`${url}${route}`, 'GET', { host: `localhost:${new URL(url).port}` });
        expect(ok.status, url).toBe(200);
        expect(ok.headers['x-content-type-options']).toBe('nosniff');
        const rebound = await send(`${url}${route}`, 'GET', { host: 'rebind.evil.example' });
        expect(rebound.status).toBe(421);
        expect(typeof rebound.json().error).toBe('string');
        const page = await send(`${url}${route}`, 'POST', { origin: 'http://evil.example', 'content-type': 'text/plain' }, 'x');
        expect(page.status).toBe(403);
      }
    } finally {
      await model.close();
      await ppe.close();
    }
  });

  it("the processor's status server answers only its allowed hosts (ALLOWED_HOSTS)", async () => {
    const dataDir = await tempDir();
    const proc = await startProcessor({ DATA_DIR: dataDir, PROCESSOR_BACKEND_URL: server.url, ALLOWED_HOSTS: 'lookout-processor' });
    try {
      const p = new URL(proc.url).port;
      expect((await send(`${proc.url}/health`, 'GET', { host: `lookout-processor:${p}` })).status).toBe(200);
      expect((await send(`${proc.url}/health`, 'GET', { host: `127.0.0.1:${p}` })).status).toBe(200);
      const refused = await send(`${proc.url}/ready`, 'GET', { host: `localhost:${p}` });
      expect(refused.status).toBe(421);
      expect(refused.json().error.code).toBe('host_not_allowed');
    } finally {
      await proc.close();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
