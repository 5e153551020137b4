/**
 * Issue #15 (metrics and logs): GET /metrics of the API server, the processor and the model server in valid
 * Prometheus text format with the documented series; JSON logs with a request id on every request line and in
 * error answers; secrets never in the log.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createService, type Service } from '../../server/app.js';
import { loadSettings } from '../../server/config/settings.js';
import { createLogger } from '../../server/logger.js';
import { listenModelServer } from '../../server/model-server/app.js';
import { outbox, startBackend, startProcessor, tempDir, waitFor } from '../helpers/processor-harness.js';
import { readTestImage, REPO_ROOT, uploadImage } from '../helpers/test-server.js';

// ---- a strict parser of the Prometheus text exposition format (version 0.0.4) ----

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
interface Family {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

// Prometheus reads values with Go's strconv.ParseFloat, which takes Inf and NaN in any case; prom-client writes
// NaN as `Nan` (the event-loop lag before its first sample), so this parser is exactly that lenient and no more.
function parseValue(text: string, line: string): number {
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (/^nan$/i.test(text)) return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value ${JSON.stringify(text)} in: ${line}`);
  return Number(text);
}

/** Parses `{a="x",b="y\"z"}` from `s` at `i` (after the metric name); returns the labels and the index after `}`. */
function parseLabels(s: string, start: number, line: string): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  let i = start + 1;
  for (;;) {
    if (s[i] === '}') return [labels, i + 1];
    const eq = s.indexOf('=', i);
    const name = s.slice(i, eq);
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} in: ${line}`);
    if (name in labels) throw new Error(`repeated label ${name} in: ${line}`);
    if (s[eq + 1] !== '"') throw new Error(`label value not quoted in: ${line}`);
    let value = '';
    let j = eq + 2;
    for (; ; j++) {
      const ch = s[j];
      if (ch === undefined) throw new Error(`unterminated label value in: ${line}`);
      if (ch === '"') break;
      if (ch === '\\') {
        const next = s[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`bad escape \\${next} in: ${line}`);
      } else value += ch;
    }
    labels[name] = value;
    i = j + 1;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') throw new Error(`expected , or } in: ${line}`);
  }
}

function parseExposition(text: string): Map<string, Family> {
  expect(text.endsWith('\n')).toBe(true);
  const families = new Map<string, Family>();
  let current: Family | null = null;
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name in: ${line}`);
      let fam = families.get(name);
      if (!fam) {
        if (current && current.samples.length === 0 && current.name !== name) {
          // A family with HELP/TYPE and no sample is allowed (a labelled metric never used).
        }
        fam = { name, help: '', type: 'untyped', samples: [] };
        families.set(name, fam);
      } else if (fam.samples.length) throw new Error(`${kind} of ${name} after its samples`);
      if (kind === 'HELP') fam.help = rest;
      else {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest)) throw new Error(`bad type in: ${line}`);
        fam.type = rest as Family['type'];
      }
      current = fam;
      continue;
    }
    if (line.startsWith('#')) continue;
    const nameEnd = line.search(/[{ ]/);
    const name = line.slice(0, nameEnd);
    if (!NAME.test(name)) throw new Error(`bad sample name in: ${line}`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (line[i] === '{') [labels, i] = parseLabels(line, i, line);
    if (line[i] !== ' ') throw new Error(`expected a space before the value in: ${line}`);
    const parts = line.slice(i + 1).split(' ');
    if (parts.length > 2) throw new Error(`trailing text in: ${line}`);
    const value = parseValue(parts[0]!, line);
    if (parts[1] !== undefined && !/^-?\d+$/.test(parts[1])) throw new Error(`bad timestamp in: ${line}`);
    // The sample belongs to the current family (its name, or name_bucket/_sum/_count for histograms).
    if (!current) throw new Error(`sample before any TYPE: ${line}`);
    const base = current.name;
    const ok =
      name === base ||
      ((current.type === 'histogram' || current.type === 'summary') && [`${base}_sum`, `${base}_count`].includes(name)) ||
      (current.type === 'histogram' && name === `${base}_bucket`);
    if (!ok) throw new Error(`sample ${name} outside its family (${base}): ${line}`);
    current.samples.push({ name, labels, value });
  }
  for (const fam of families.values()) {
    if (fam.type === 'untyped' || !fam.help) throw new Error(`${fam.name}: no TYPE or HELP`);
    if (fam.type === 'counter') for (const s of fam.samples) expect(s.value, `${fam.name} is a counter`).toBeGreaterThanOrEqual(0);
    if (fam.type === 'histogram') checkHistogram(fam);
  }
  return families;
}

/** Every series of a histogram: ascending cumulative buckets ending at le="+Inf", which equals _count; a _sum. */
function checkHistogram(fam: Family): void {
  const series = new Map<string, { buckets: [number, number][]; sum?: number; count?: number }>();
  for (const s of fam.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name.endsWith('_bucket')) {
      if (le === undefined) throw new Error(`${fam.name}: a bucket without le`);
      entry.buckets.push([parseValue(le, le), s.value]);
    } else if (s.name.endsWith('_sum')) entry.sum = s.value;
    else entry.count = s.value;
  }
  for (const [key, { buckets, sum, count }] of series) {
    expect(buckets.length, `${fam.name}${key}: buckets`).toBeGreaterThan(0);
    expect(buckets.at(-1)![0], `${fam.name}${key}: the last bucket is le="+Inf"`).toBe(Number.POSITIVE_INFINITY);
    for (let i = 1; i < buckets.length; i++) {
      expect(buckets[i]![0]).toBeGreaterThan(buckets[i - 1]![0]);
      expect(buckets[i]![1]).toBeGreaterThanOrEqual(buckets[i - 1]![1]);
    }
    expect(count, `${fam.name}${key}: _count`).toBe(buckets.at(-1)![1]);
    expect(sum, `${fam.name}${key}: _sum`).toBeTypeOf('number');
  }
}

function sampleValue(fams: Map<string, Family>, name: string, labels: Record<string, string>): number | undefined {
  for (const fam of fams.values()) {
    for (const s of fam.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
    }
  }
  return undefined;
}

async function scrape(url: string): Promise<Map<string, Family>> {
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(await res.text());
}

describe('the exposition format parser', () => {
  it('reads escaped label values and refuses a broken line', () => {
    const fams = parseExposition(
      '# HELP x_total A counter.\n# TYPE x_total counter\nx_total{a="q\\"uote",b="back\\\\slash",c="new\\nline"} 3\n',
    );
    expect(fams.get('x_total')!.samples[0]!.labels).toEqual({ a: 'q"uote', b: 'back\\slash', c: 'new\nline' });
    expect(() => parseExposition('# HELP y A.\n# TYPE y gauge\ny{a="unterminated} 1\n')).toThrow();
    expect(() => parseExposition('# HELP y A.\n# TYPE y gauge\ny{a="x"} one\n')).toThrow();
    expect(() => parseExposition('# HELP h A.\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n')).toThrow();
  });
});

// ---- the API server, in JSON log format, with a secret configured ----

const SECRET = 'sk-test-9f8e7d6c5b4a-DO-NOT-LOG';
let service: Service;
let server: ServerType;
let base: string;
let dataDir: string;
const logLines: string[] = [];

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-observability-'));
  const settings = loadSettings(
    {
      DATA_DIR: dataDir,
      WORKERS: '1',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
      REMOTE_DETECTOR_ENABLED: 'false',
      CHAT_ENDPOINT: 'http://127.0.0.1:9/v1',
      CHAT_API_KEY: SECRET,
    },
    REPO_ROOT,
  );
  expect(settings.logFormat).toBe('json');
  service = await createService(
    settings,
    createLogger(settings.logLevel, (line) => logLines.push(line), settings.logFormat),
  );
  server = await new Promise((resolve) => {
    const s = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await new Promise<void>((resolve) => server?.close(() => resolve()));
  await service?.close();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

/** The log lines as JSON objects (every line must be one). */
function jsonLogs(): Record<string, unknown>[] {
  return logLines
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('GET /metrics of the API server', () => {
  it('is valid exposition format with the default Node metrics and the documented families', async () => {
    const fams = await scrape(base);
    for (const name of [
      'process_cpu_user_seconds_total',
      'nodejs_heap_size_used_bytes',
      'http_request_duration_seconds',
      'lookout_engine_duration_seconds',
      'lookout_worker_queue_depth',
      'lookout_worker_threads',
      'lookout_upstream_errors_total',
      'lookout_trainings_total',
      'lookout_training_duration_seconds',
      'lookout_training_faces_total',
    ]) {
      expect(fams.has(name), name).toBe(true);
    }
    expect(fams.get('http_request_duration_seconds')!.type).toBe('histogram');
    expect(sampleValue(fams, 'lookout_worker_queue_depth', { pool: 'vision' })).toBe(0);
    expect(sampleValue(fams, 'lookout_worker_threads', { pool: 'vision' })).toBeGreaterThanOrEqual(1);
    for (const upstream of ['remote', 'llm', 'ppe_detector', 'broker']) {
      expect(sampleValue(fams, 'lookout_upstream_errors_total', { upstream }), upstream).toBeTypeOf('number');
    }
  });

  it('counts each request of /api/labels in its histogram, by the route pattern and status', async () => {
    const labels = { method: 'GET', route: '/api/labels', status: '200' };
    const before = sampleValue(await scrape(base), 'http_request_duration_seconds_count', labels) ?? 0;
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/api/labels`)).status).toBe(200);
    const after = await scrape(base);
    expect(sampleValue(after, 'http_request_duration_seconds_count', labels)).toBe(before + 3);
    expect(sampleValue(after, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 3);
  });

  it('reports a route with a label in its path by its pattern, never by the raw URL', async () => {
    // A label nobody enrolled: 200 with an empty list (as the original answers), and its name never in /metrics.
    const res = await fetch(`${base}/api/images/secret-person-name`);
    expect(res.status).toBe(200);
    await res.text();
    const res2 = await fetch(`${base}/api/no/such/endpoint?token=abc`);
    expect(res2.status).toBe(404);
    await res2.text();
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(text).not.toContain('secret-person-name');
    expect(text).not.toContain('no/such');
    const fams = parseExposition(text);
    expect(sampleValue(fams, 'http_request_duration_seconds_count', { route: '/api/images/{label}', status: '200' })).toBe(1);
    expect(sampleValue(fams, 'http_request_duration_seconds_count', { route: '/api/*', status: '404' })).toBeGreaterThanOrEqual(1);
  });

  it('times the engines: recognize (and the detection under it) and training', async () => {
    const face = await readTestImage('faces/grace_hopper.jpg');
    expect((await uploadImage(base, 'alice', face)).status).toBe(200);
    const train = await fetch(`${base}/api/train`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(train.status).toBe(200);
    const trained = (await train.json()) as { total_faces: number };
    const rec = await fetch(`${base}/api/recognize`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ image: face.toString('base64') }),
    });
    expect(rec.status).toBe(200);
    await rec.text();
    const fams = await scrape(base);
    expect(sampleValue(fams, 'lookout_engine_duration_seconds_count', { engine: 'recognize' })).toBe(1);
    expect(sampleValue(fams, 'lookout_trainings_total', { result: 'ok' })).toBe(1);
    expect(sampleValue(fams, 'lookout_training_duration_seconds_count', {})).toBe(1);
    expect(sampleValue(fams, 'lookout_training_faces_total', {})).toBe(trained.total_faces);
  }, 60_000);
});

describe('request ids and JSON logs', () => {
  it('echoes a safe X-Request-Id, replaces an unsafe one, and logs one line per request with it', async () => {
    const mine = await fetch(`${base}/api/health`, { headers: { 'x-request-id': 'client-id.42' } });
    await mine.text();
    expect(mine.headers.get('x-request-id')).toBe('client-id.42');
    const unsafe = await fetch(`${base}/api/labels`, { headers: { 'x-request-id': 'bad id\twith "quotes"' } });
    await unsafe.text();
    const assigned = unsafe.headers.get('x-request-id')!;
    expect(assigned).toMatch(/^[0-9a-f-]{36}$/);

    const lines = jsonLogs();
    for (const line of lines) {
      expect(typeof line.time).toBe('string');
      expect(Number.isNaN(Date.parse(line.time as string))).toBe(false);
      expect(['debug', 'info', 'warn', 'error']).toContain(line.level);
      expect(typeof line.msg).toBe('string');
    }
    const requests = lines.filter((l) => l.msg === 'request');
    const health = requests.find((l) => l.request_id === 'client-id.42');
    expect(health).toMatchObject({ method: 'GET', route: '/api/health', status: 200, level: 'debug' });
    expect(health!.duration_ms).toBeTypeOf('number');
    expect(requests.find((l) => l.request_id === assigned)).toMatchObject({ route: '/api/labels', status: 200 });
    expect(logLines.join('')).not.toContain('bad id');
    // Every request line carries a request id.
    for (const r of requests) expect(r.request_id).toBeTypeOf('string');
  });

  it('puts the request id in error answers (ApiError, unknown endpoint, not-found page)', async () => {
    for (const [url, init] of [
      [`${base}/api/recognize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"image": 5}' }],
      [`${base}/api/nothing-here`, {}],
      [`${base}/models/none.json`, {}],
    ] as const) {
      const res = await fetch(url, init);
      const body = (await res.json()) as { error: { code: string; request_id?: string } };
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(body.error.request_id, url).toBe(res.headers.get('x-request-id'));
      const line = jsonLogs().find((l) => l.msg === 'request' && l.request_id === body.error.request_id);
      expect(line, url).toMatchObject({ status: res.status });
    }
  });

  it('counts an LLM failure as an upstream error, and never logs the API key', async () => {
    const before = sampleValue(await scrape(base), 'lookout_upstream_errors_total', { upstream: 'llm' })!;
    const res = await fetch(`${base}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${SECRET}` },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] }),
    });
    const body = (await res.json()) as { error?: { code: string; request_id?: string } };
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(body.error?.request_id).toBe(res.headers.get('x-request-id'));
    if (body.error?.code.startsWith('llm_')) {
      expect(sampleValue(await scrape(base), 'lookout_upstream_errors_total', { upstream: 'llm' })).toBe(before + 1);
    }
    await fetch(`${base}/api/chat/status`).then((r) => r.text());
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.join('')).not.toContain(SECRET);
  });
});

// ---- the processor and the model server ----

describe('GET /metrics of the processor', () => {
  it('answers its event and mail counters and the consumer lag', async () => {
    const api = await startBackend();
    const data = await tempDir();
    const p = await startProcessor({ DATA_DIR: data, PROCESSOR_BACKEND_URL: api.url, PROCESSOR_ANNOUNCE_EXISTING: 'true' });
    try {
      const face = await readTestImage('faces/grace_hopper.jpg');
      expect((await uploadImage(api.url, 'bob', face)).status).toBe(200);
      await waitFor('the mail', async () => ((await outbox(data)).length ? true : null));
      const fams = await waitFor('the counters', async () => {
        const f = await scrape(p.url);
        return (sampleValue(f, 'lookout_processor_mails_sent_total', {}) ?? 0) >= 1 ? f : null;
      });
      expect(sampleValue(fams, 'lookout_processor_events_published_total', {})).toBeGreaterThanOrEqual(1);
      expect(sampleValue(fams, 'lookout_processor_events_consumed_total', {})).toBeGreaterThanOrEqual(1);
      expect(sampleValue(fams, 'lookout_processor_mail_failures_total', {})).toBe(0);
      expect(sampleValue(fams, 'lookout_processor_dead_letters_total', {})).toBe(0);
      expect(sampleValue(fams, 'lookout_processor_consumer_lag', {})).toBeTypeOf('number');
      expect(fams.has('process_cpu_user_seconds_total')).toBe(true);
    } finally {
      await p.close();
      await api.close();
    }
  }, 60_000);
});

describe('GET /metrics of the model server', () => {
  it('answers request durations by route pattern and status, and the inferences', async () => {
    const running = await listenModelServer({
      loadBackend: async () => ({ infer: async () => new Float32Array(200 * 7), dispose: () => {} }),
    });
    try {
      await running.server.loaded;
      const body = { inputs: [{ name: 'input.1', shape: [1, 3, 300, 300], datatype: 'FP32', data: new Array(3 * 300 * 300).fill(0) }] };
      const ok = await fetch(`${running.url}/v2/models/face-detection-retail-0005/infer`, { method: 'POST', body: JSON.stringify(body) });
      expect(ok.status).toBe(200);
      await ok.text();
      const bad = await fetch(`${running.url}/v2/models/face-detection-retail-0005/infer`, { method: 'POST', body: 'nope' });
      expect(bad.status).toBe(412);
      await bad.text();
      const fams = await scrape(running.url);
      expect(sampleValue(fams, 'lookout_model_server_inferences_total', { result: 'ok' })).toBe(1);
      expect(sampleValue(fams, 'lookout_model_server_inferences_total', { result: 'error' })).toBe(1);
      const route = '/v2/models/{name}/infer';
      expect(sampleValue(fams, 'http_request_duration_seconds_count', { method: 'POST', route, status: '200' })).toBe(1);
      expect(sampleValue(fams, 'http_request_duration_seconds_count', { method: 'POST', route, status: '412' })).toBe(1);
    } finally {
      await running.close();
    }
  });
});
