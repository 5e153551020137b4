/**
 * The event processor's own contract: its GET /openapi.json is valid OpenAPI 3.1 (the validator the API's document
 * is checked with), documents exactly the routes its Hono app serves, and a real processor's /health and /ready
 * answers (ready and not ready) match the schemas the document publishes for them.
 */
import fs from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadProcessorSettings } from '../../server/config/settings.js';
import { processorOpenApiDocument } from '../../server/http/openapi.js';
import { createLogger } from '../../server/logger.js';
import { createProcessor } from '../../server/processor/processor.js';
import { processorRoutes } from '../../shared/api/processor.js';
import { type InProcessProcessor, startProcessor, tempDir, waitFor } from '../helpers/processor-harness.js';
import { REPO_ROOT, startTestServer, type TestServer } from '../helpers/test-server.js';

let api: TestServer;
let proc: InProcessProcessor;
let dataDir: string;
let doc: any;

beforeAll(async () => {
  api = await startTestServer({ WORKERS: '1', EMBEDDING_ENABLED: 'false', OBJECT_DETECTION_ENABLED: 'false', CHAT_ENABLED: 'false' });
  dataDir = await tempDir();
  proc = await startProcessor({ DATA_DIR: dataDir, PROCESSOR_BACKEND_URL: api.url });
  const res = await fetch(`${proc.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = await res.json();
});
afterAll(async () => {
  await proc?.close();
  await api?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

function documentedOperations(): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const m of Object.keys(item)) if (METHODS.includes(m)) out.add(`${m.toUpperCase()} ${path}`);
  return out;
}

function servedOperations(): Set<string> {
  const out = new Set<string>();
  for (const r of proc.processor.app.routes) {
    if (r.method === 'ALL' || r.path.endsWith('*')) continue;
    out.add(`${r.method} ${r.path.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
  }
  return out;
}

/** A JSON schema of the document with every `#/components/schemas/X` reference replaced by X (none is recursive). */
function inlineRefs(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inlineRefs);
  if (!schema || typeof schema !== 'object') return schema;
  const ref = (schema as { $ref?: string }).$ref;
  if (ref) {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
    if (!name || !doc.components.schemas[name]) throw new Error(`unresolved reference ${ref}`);
    return inlineRefs(doc.components.schemas[name]);
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inlineRefs(v)]));
}

/** The zod schema of what the document says `path` answers with `status` as JSON. */
function documentedSchema(path: string, status: number): z.ZodType {
  const media = doc.paths[path]?.get?.responses?.[String(status)]?.content?.['application/json'];
  if (!media?.schema) throw new Error(`GET ${path} -> ${status}: no JSON schema documented`);
  const { example: _example, ...schema } = inlineRefs(media.schema) as Record<string, unknown>;
  return z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
}

function expectMatches(schema: z.ZodType, body: unknown, where: string): void {
  const result = schema.safeParse(body);
  expect(result.success ? [] : result.error.issues, `${where}: ${JSON.stringify(body)}`).toEqual([]);
}

describe("the processor's GET /openapi.json", () => {
  it('is valid OpenAPI 3.1, titled for the processor, with the running version', async () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.title).toBe('Lookout event processor');
    expect(doc.info.version).toBe('test');
    expect(doc).toEqual(processorOpenApiDocument('test'));
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 1)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents exactly the routes the processor serves, at its root', () => {
    const served = servedOperations();
    const documented = documentedOperations();
    expect([...documented].sort()).toEqual(['GET /health', 'GET /metrics', 'GET /openapi.json', 'GET /ready']);
    expect(documented.size).toBe(Object.keys(processorRoutes).length);
    expect([...served].sort()).toEqual([...documented].sort());
  });

  it('gives every operation a summary, an id, a tag and schemas, /ready its 503 and every error the error body', () => {
    for (const [path, item] of Object.entries<any>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.summary, where).toBeTruthy();
        expect(op.operationId, where).toBeTruthy();
        expect(op.tags?.length, where).toBeGreaterThan(0);
        for (const tag of op.tags)
          expect(
            doc.tags.map((t: any) => t.name),
            where,
          ).toContain(tag);
        expect(Object.keys(op.responses), where).toEqual(expect.arrayContaining(['200', '500']));
        for (const [status, res] of Object.entries<any>(op.responses)) {
          // Every answer is JSON but the Prometheus text of /metrics.
          const media = where === 'GET /metrics' && status === '200' ? 'text/plain' : 'application/json';
          expect(res.content[media].schema, `${where} ${status}`).toBeTruthy();
          if (/^[45]/.test(status) && where !== 'GET /ready')
            expect(res.content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
        }
      }
    }
    const ready = doc.paths['/ready'].get.responses;
    expect(ready['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/ProcessorReady');
    expect(ready['503'].content['application/json'].schema.$ref).toBe('#/components/schemas/ProcessorReady');
    expect(doc.paths['/health'].get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/HealthResponse');
    expect(doc.components.schemas.Error.properties.error.properties.code.enum).toContain('not_found');
  });
});

describe("a real processor's answers", () => {
  it('GET /health answers the documented body', async () => {
    const res = await fetch(`${proc.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({ status: 'ok', version: 'test' });
    expectMatches(documentedSchema('/health', 200), body, 'GET /health -> 200');
    // The documented schema does refuse a wrong body (the check above is not vacuous).
    expect(documentedSchema('/health', 200).safeParse({ ...body, uptime_s: 'soon' }).success).toBe(false);
    expect(documentedSchema('/ready', 200).safeParse(body).success).toBe(false);
  });

  it('GET /ready answers the documented body once ready (200)', async () => {
    const body = await waitFor('the processor to be ready', async () => {
      const res = await fetch(`${proc.url}/ready`);
      return res.status === 200 ? ((await res.json()) as any) : null;
    });
    expect(body.status).toBe('ready');
    expect(body.broker.kind).toBe('in-process');
    expectMatches(documentedSchema('/ready', 200), body, 'GET /ready -> 200');
    expectMatches(processorRoutes.ready.responses[200].content['application/json'].schema, body, 'GET /ready (zod)');
  });

  it('GET /ready answers 503 with the documented body before it consumes', async () => {
    const dir = await tempDir();
    const settings = loadProcessorSettings({ DATA_DIR: dir, PROCESSOR_BACKEND_URL: api.url, LOG_LEVEL: 'silent' }, REPO_ROOT);
    const idle = await createProcessor(settings, createLogger('silent'), { version: 'test' });
    try {
      const res = await idle.app.request('/ready');
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body).toMatchObject({ status: 'not_ready', role: 'stopped' });
      expectMatches(documentedSchema('/ready', 503), body, 'GET /ready -> 503');
    } finally {
      await idle.close();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('answers an unknown path 404 with a documented error body', async () => {
    const res = await fetch(`${proc.url}/nothing`);
    expect(res.status).toBe(404);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe('not_found');
    expectMatches(z.fromJSONSchema(inlineRefs(doc.components.schemas.Error) as never), body, 'GET /nothing -> 404');
  });
});
