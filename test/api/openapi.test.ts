/**
 * The published contract: GET /api/openapi.json is valid OpenAPI 3.1 (checked by a real validator), every route
 * the app serves under /api is in it with its request and response schemas (and every documented route is
 * served), and GET /api/docs serves the reference page and its files from this server.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes } from '../../shared/api/routes.js';
import { checkedFetch, contractProblems, routeFor } from '../helpers/contract.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let doc: any;

beforeAll(async () => {
  server = await startTestServer({ WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  const res = await fetch(`${server.url}/api/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = await res.json();
});
afterAll(async () => {
  await server?.close();
});

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

/** `METHOD /api/path/{param}` for every operation of the document. */
function documentedOperations(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const m of Object.keys(item)) if (METHODS.includes(m)) out.add(`${m.toUpperCase()} ${path}`);
  return out;
}

/** `METHOD /api/path/{param}` for every route registered in the Hono app (and /metrics), middleware and the catch-all aside. */
function servedOperations(): Set<string> {
  const out = new Set<string>();
  for (const r of server.service.app.routes) {
    if (!(r.path.startsWith('/api/') || r.path === '/metrics') || r.method === 'ALL' || r.path.endsWith('*')) continue;
    out.add(`${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
  }
  return out;
}

describe('GET /api/openapi.json', () => {
  it('is valid OpenAPI 3.1 with the package version', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(server.service.ctx.version);
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every route the app serves under /api, and serves every route it documents', () => {
    const served = servedOperations();
    const documented = documentedOperations();
    expect(served.size).toBeGreaterThanOrEqual(Object.keys(apiRoutes).length);
    expect(
      [...served].filter((op) => !documented.has(op)),
      'served but not in /api/openapi.json',
    ).toEqual([]);
    expect(
      [...documented].filter((op) => !served.has(op)),
      'documented but not served',
    ).toEqual([]);
  });

  it('gives every operation a summary, its parameters, a request schema where it takes a body, and response schemas', () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.summary, where).toBeTruthy();
        expect(op.operationId, where).toBeTruthy();
        for (const name of path.match(/\{([^}]+)\}/g) ?? []) {
          expect(
            op.parameters?.some((p: any) => p.in === 'path' && `{${p.name}}` === name),
            `${where} ${name}`,
          ).toBe(true);
        }
        if (['post', 'put'].includes(method)) {
          const content = op.requestBody?.content ?? {};
          expect(Object.keys(content).length, where).toBeGreaterThan(0);
          for (const media of Object.values<any>(content)) expect(media.schema, where).toBeTruthy();
        }
        const statuses = Object.keys(op.responses);
        expect(
          statuses.some((s) => /^2/.test(s)),
          where,
        ).toBe(true);
        expect(statuses, where).toContain('500');
        for (const [status, res] of Object.entries<any>(op.responses)) {
          if (status === '304') continue;
          const media = Object.values<any>(res.content ?? {});
          expect(media.length, `${where} ${status}`).toBeGreaterThan(0);
          for (const m of media) expect(m.schema, `${where} ${status}`).toBeTruthy();
          // 503 of /ready is the ready body (not ready yet); every other 4xx/5xx is the error body.
          if (/^[45]/.test(status) && where !== 'GET /api/ready')
            expect(res.content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
        }
      }
    }
  });

  it('documents the errors, the streamed chat, the upload types and the binary answers', () => {
    const p = doc.paths;
    expect(Object.keys(p['/api/images'].post.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(Object.keys(p['/api/images'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '413', '415', '500']));
    expect(Object.keys(p['/api/train'].post.responses)).toEqual(expect.arrayContaining(['200', '409', '422', '503']));
    expect(Object.keys(p['/api/chat'].post.responses)).toEqual(expect.arrayContaining(['200', '400', '429', '502', '503', '504']));
    expect(p['/api/chat'].post.responses['200'].content['text/event-stream'].schema.$ref).toBe('#/components/schemas/ChatStreamEvent');
    expect(Object.keys(p['/api/ready'].get.responses)).toEqual(expect.arrayContaining(['200', '503']));
    expect(p['/api/images/{label}/{filename}'].get.responses['200'].content['image/*']).toBeTruthy();
    expect(p['/api/models/trained/lbph'].get.responses['200'].content['text/yaml']).toBeTruthy();
    expect(p['/api/models/trained'].get.responses['304']).toBeTruthy();
    expect(p['/api/results'].get.parameters.map((x: any) => x.name).sort()).toEqual(['kind', 'label', 'limit']);
    // Examples for people trying the API: request bodies and every error code.
    expect(p['/api/recognize'].post.requestBody.content['application/json'].example.image).toMatch(/^data:image\/jpeg;base64,/);
    expect(p['/api/train'].post.responses['409'].content['application/json'].examples.training_in_progress.value.error.code).toBe(
      'training_in_progress',
    );
    // A known face and an unknown one, with its reason.
    expect(doc.components.schemas.RecognizeResponse.example.faces.map((f: any) => f.reason ?? null)).toEqual([null, 'below_threshold']);
  });

  it('documents why a face is unknown, each reason in words, and deleting one image', () => {
    const reason = doc.components.schemas.UnknownReason;
    expect(reason.enum).toEqual([
      'not_trained',
      'no_match',
      'below_threshold',
      'ambiguous',
      'copy_of_training_image',
      'given_to_another_face',
      'low_quality',
      'corrected',
    ]);
    for (const code of reason.enum) expect(reason.description).toContain(`\`${code}\`: `);
    expect(doc.components.schemas.FaceResult.properties.reason).toBeTruthy();
    // Unsure names and near misses (#25): the certainty of a name, and the nearest person of an unknown face.
    expect(doc.components.schemas.FaceResult.properties.certainty.enum).toEqual(['high', 'unsure']);
    expect(doc.components.schemas.FaceCandidate.required).toEqual(['label', 'confidence', 'distance']);
    const del = doc.paths['/api/images/{label}/{filename}'].delete;
    expect(Object.keys(del.responses)).toEqual(expect.arrayContaining(['200', '400', '404']));
    expect(del.responses['404'].description).toContain('`not_found`');
    expect(del.responses['404'].description).toContain('`label_not_found`');
  });
});

describe('the contract check of the test server', () => {
  it('refuses an undocumented status, a wrong body, an undocumented error code and an unknown route', () => {
    expect(contractProblems('GET', '/api/labels', 200, 'application/json', '{"labels":[],"count":0,"details":[]}')).toEqual([]);
    expect(contractProblems('GET', '/api/labels', 200, 'application/json', '{"labels":[],"count":"0"}').join()).toMatch(/does not match/);
    expect(
      contractProblems(
        'GET',
        '/api/labels',
        409,
        'application/json',
        '{"error":{"code":"training_in_progress","message":"x"},"detail":"x"}',
      ).join(),
    ).toMatch(/not documented/);
    expect(
      contractProblems(
        'GET',
        '/api/images/a',
        404,
        'application/json',
        '{"error":{"code":"not_trained","message":"x"},"detail":"x"}',
      ).join(),
    ).toMatch(/not documented/);
    expect(
      contractProblems(
        'DELETE',
        '/api/images/a',
        404,
        'application/json',
        '{"error":{"code":"label_not_found","message":"x"},"detail":"x"}',
      ),
    ).toEqual([]);
    // Without `detail` (the original's clients read it) an error is not the error body.
    expect(
      contractProblems('DELETE', '/api/images/a', 404, 'application/json', '{"error":{"code":"label_not_found","message":"x"}}').join(),
    ).toMatch(/detail/);
    expect(contractProblems('GET', '/api/nothing', 200, 'application/json', '{}').join()).toMatch(/no documented route/);
    expect(routeFor('GET', '/api/images/alice/1.jpg')?.name).toBe('imageFile');
    expect(contractProblems('GET', '/api/images/alice/1.jpg', 200, 'text/html', '<p>').join()).toMatch(/content type/);
  });

  it('checks each answer a wrapped handler gives, streamed ones included, and passes the answer on unchanged', async () => {
    const sse = 'event: delta\ndata: {"content":"Hi"}\n\nevent: done\ndata: {"response":7}\n\n';
    const checked = checkedFetch(async (req: Request) =>
      new URL(req.url).pathname === '/api/chat'
        ? new Response(sse, { headers: { 'content-type': 'text/event-stream' } })
        : new Response('{"labels":[]}', { status: 200, headers: { 'content-type': 'application/json' } }),
    );
    const res = await checked.fetch(new Request('http://127.0.0.1/api/labels'));
    expect(await res.json()).toEqual({ labels: [] });
    expect(await (await checked.fetch(new Request('http://127.0.0.1/api/chat', { method: 'POST', body: '{}' }))).text()).toBe(sse);
    await checked.settled();
    expect(checked.problems).toHaveLength(2);
    expect(checked.problems[0]).toMatch(/GET \/api\/labels -> 200: the body does not match labels's schema/);
    expect(checked.problems[1]).toMatch(/event done does not match/);
  });
});

describe('GET /api/docs', () => {
  it('serves the reference page, its initializer and the Swagger UI files from this server', async () => {
    const page = await fetch(`${server.url}/api/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cross-origin-embedder-policy')).toBe('require-corp');
    const html = await page.text();
    expect(html).not.toMatch(/<script>[^<]/); // no inline script: CSP-ready
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(urls).toEqual(expect.arrayContaining(['/api/docs/swagger-ui.css', '/api/docs/swagger-ui-bundle.js', '/api/docs/init.js']));
    for (const url of urls) {
      expect(url.startsWith('/api/docs/'), url).toBe(true);
      const res = await fetch(`${server.url}${url}`);
      expect(res.status, url).toBe(200);
      expect(res.headers.get('cross-origin-resource-policy'), url).toBe('same-origin');
      expect((await res.arrayBuffer()).byteLength, url).toBeGreaterThan(0);
    }
    const init = await (await fetch(`${server.url}/api/docs/init.js`)).text();
    expect(init).toContain("url: '/api/openapi.json'");
    expect(init).toContain('validatorUrl: null');
  });

  it('answers 404 with the error body for a file it does not serve', async () => {
    for (const file of ['package.json', '..%2Fpackage.json', 'index.html']) {
      const res = await fetch(`${server.url}/api/docs/${file}`);
      expect(res.status, file).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
    }
  });
});
