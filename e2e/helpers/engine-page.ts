/**
 * Drives the in-browser engine on the bench page (client/bench.html): `window.lookoutEngine` is its harness,
 * called through page.evaluate with images as base64 text. Also: training people through the real API, and
 * watching which API calls the page makes.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Page, Request } from '@playwright/test';
import sharp from 'sharp';
import { captureVariations } from '../../bench/captures.js';
import type { EngineBenchResult as BenchResult } from '../../shared/bench/engine-bench.js';
import type { FaceResult, ObjectDetectionResponse, RecognitionModel, RecognizeResponse } from '../../shared/api/index.js';
import { TESTDATA, type Lookout } from './lookout.js';

export type Backend = 'wasm' | 'webgl' | 'webgpu' | 'auto';

export interface BackendReport {
  requested: string;
  backend: 'wasm' | 'webgl' | 'webgpu';
  attempts: { backend: string; ok: boolean; reason?: string }[];
  crossOriginIsolated: boolean;
  wasm?: { simd: boolean; threads: boolean; threadsCount: number };
}

export interface EngineInit {
  backend: BackendReport;
  cascade: { window: string; threads: number; scan: 'simd' | 'wasm' | 'js' };
  embedding: { loaded: boolean; error?: string };
  objects: { loaded: boolean; detector?: string; error?: string };
  timing: Record<string, number>;
}

export type EngineRecognition = RecognizeResponse & { timing: Record<string, number>; roundTripMs: number };
export type EngineObjects = ObjectDetectionResponse & { detector: string; timing: Record<string, number>; roundTripMs: number };

export interface EngineTraining {
  labels: string[];
  total_faces: number;
  recognizers_trained: string[];
  skipped: { index: number; label: string }[];
  files: { lbphYaml: string; embeddingsJson: string | null };
}

// The harness's shape as seen from Node (page.evaluate callbacks run in the page; e2e compiles without DOM types).
export interface EngineInitOptions {
  backend: Backend;
  preload?: { embedding?: boolean; objects?: boolean };
  urls?: { yolo?: string };
  cascadeThreads?: number;
}

interface Harness {
  init(o: EngineInitOptions): Promise<EngineInit>;
  setModel(m: { lbphYaml?: string | null; embeddingsJson?: string | null }): Promise<unknown>;
  loadServerModels(indexUrl?: string): Promise<{ version: string | null; lbph: unknown; embedding: unknown }>;
  recognizeFile(b64: string, type: string, o: { recognition_model: RecognitionModel }): Promise<EngineRecognition>;
  recognizeRgba(b64: string, w: number, h: number, o: { recognition_model: RecognitionModel }): Promise<EngineRecognition>;
  detectObjectsFile(b64: string, type: string, confidence?: number): Promise<EngineObjects>;
  trainFiles(files: { label: string; b64: string; type: string }[]): Promise<EngineTraining>;
  decodeFile(b64: string, type: string): Promise<{ width: number; height: number; rgbChecksum: number }>;
}
// Only types may be shared with the callbacks: page.evaluate sends their source text, so each reads the global itself.
type WithHarness = { lookoutEngine: Harness };

export function testImage(rel: string): Buffer {
  return fs.readFileSync(path.join(TESTDATA, rel));
}

export function mimeOf(rel: string): string {
  return rel.endsWith('.png') ? 'image/png' : 'image/jpeg';
}

/** Opens the bench page without parameters: the harness only, no camera loop. */
export async function openEnginePage(page: Page, baseUrl: string): Promise<EnginePage> {
  await page.goto(`${baseUrl}/bench.html`);
  await page.waitForFunction(() => Boolean((globalThis as unknown as { lookoutEngine?: unknown }).lookoutEngine));
  return new EnginePage(page);
}

export class EnginePage {
  constructor(readonly page: Page) {}

  init(backend: Backend, preload = { embedding: true, objects: true }): Promise<EngineInit> {
    return this.initWith({ backend, preload });
  }

  initWith(options: EngineInitOptions): Promise<EngineInit> {
    return this.page.evaluate((o) => (globalThis as unknown as WithHarness).lookoutEngine.init(o), options);
  }

  loadServerModels(indexUrl?: string) {
    return this.page.evaluate((u) => (globalThis as unknown as WithHarness).lookoutEngine.loadServerModels(u), indexUrl);
  }

  setModel(models: { lbphYaml?: string | null; embeddingsJson?: string | null }) {
    return this.page.evaluate((m) => (globalThis as unknown as WithHarness).lookoutEngine.setModel(m), models);
  }

  /** A test photo, decoded by the browser. */
  recognizeFile(rel: string, model: RecognitionModel): Promise<EngineRecognition> {
    return this.page.evaluate(
      ([b64, type, m]) => (globalThis as unknown as WithHarness).lookoutEngine.recognizeFile(b64, type, { recognition_model: m }),
      [testImage(rel).toString('base64'), mimeOf(rel), model] as const,
    );
  }

  /** A test photo decoded here by sharp exactly as the server decodes it, sent as RGBA pixels. */
  async recognizeServerDecoded(rel: string, model: RecognitionModel): Promise<EngineRecognition> {
    const { data, info } = await sharp(testImage(rel))
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return this.page.evaluate(
      ([b64, w, h, m]) => (globalThis as unknown as WithHarness).lookoutEngine.recognizeRgba(b64, w, h, { recognition_model: m }),
      [data.toString('base64'), info.width, info.height, model] as const,
    );
  }

  detectObjectsFile(rel: string, confidence?: number): Promise<EngineObjects> {
    return this.page.evaluate(
      ([b64, type, c]) => (globalThis as unknown as WithHarness).lookoutEngine.detectObjectsFile(b64, type, c ?? undefined),
      [testImage(rel).toString('base64'), mimeOf(rel), confidence ?? null] as const,
    );
  }

  trainFiles(files: { label: string; bytes: Buffer; type: string }[]): Promise<EngineTraining> {
    return this.page.evaluate(
      (f) => (globalThis as unknown as WithHarness).lookoutEngine.trainFiles(f),
      files.map((f) => ({ label: f.label, b64: f.bytes.toString('base64'), type: f.type })),
    );
  }

  /** Whether the browser decodes the file to the same RGB values as the server's sharp pipeline. */
  async decodesLikeServer(rel: string): Promise<boolean> {
    const { data } = await sharp(testImage(rel)).rotate().removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
    let sum = 0;
    for (let i = 0; i < data.length; i += 3) sum = (sum * 31 + data[i] + 7 * data[i + 1] + 13 * data[i + 2]) >>> 0;
    const seen = await this.page.evaluate(([b64, type]) => (globalThis as unknown as WithHarness).lookoutEngine.decodeFile(b64, type), [
      testImage(rel).toString('base64'),
      mimeOf(rel),
    ] as const);
    return seen.rgbChecksum === sum;
  }
}

/**
 * Records the page's (and its workers') calls to the server-side engines, so a test can prove it ran in the
 * browser, and every request that left for another origin (there must be none: models and binaries are ours).
 */
export function watchEngineApiCalls(page: Page, origin: string): { calls: string[]; foreign: string[]; paths: string[] } {
  const record = { calls: [] as string[], foreign: [] as string[], paths: [] as string[] };
  const own = new URL(origin).origin;
  const seen = new Set<Request>();
  const onRequest = (req: Request) => {
    if (seen.has(req)) return; // reported to both the page and the context
    seen.add(req);
    const url = new URL(req.url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.origin !== own) record.foreign.push(req.url());
    record.paths.push(url.pathname);
    if (/^\/api\/(recognize|objects\/detect|train)\b/.test(url.pathname)) record.calls.push(`${req.method()} ${url.pathname}`);
  };
  page.on('request', onRequest);
  page.context().on('request', onRequest);
  return record;
}

// ------------------------------------------------------------------------------------------------ the server side

/** A person's training captures: the photo re-encoded, mirrored, brighter and darker (never the photo itself). */
export function trainingCaptures(rel: string): Promise<Buffer[]> {
  return captureVariations(testImage(rel));
}

async function api<T>(lookout: Lookout, method: string, route: string, body?: unknown): Promise<T> {
  const res = await fetch(`${lookout.url}/api${route}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} /api${route} answered ${res.status}: ${text}\n${lookout.output()}`);
  return JSON.parse(text) as T;
}

/** Waits until the server's embedding recognizer has loaded (it loads in the background after start). */
export async function waitForEmbedding(lookout: Lookout, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const available = await api<{ recognition_models: { name: string; available: boolean }[] }>(lookout, 'GET', '/models/available');
    if (available.recognition_models.find((m) => m.name === 'embedding')?.available) return;
    if (Date.now() > deadline) throw new Error(`the server's embedding recognizer did not load within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Uploads each person's captures through POST /api/images and trains with POST /api/train. */
export async function trainOnServer(
  lookout: Lookout,
  people: Record<string, string>,
): Promise<{ recognizers_trained: string[]; labels: string[] }> {
  for (const [label, photo] of Object.entries(people)) {
    for (const [i, bytes] of (await trainingCaptures(photo)).entries()) {
      const form = new FormData();
      form.append('label', label);
      form.append('file', new Blob([new Uint8Array(bytes)], { type: 'image/jpeg' }), `${label}-${i}.jpg`);
      const res = await fetch(`${lookout.url}/api/images`, { method: 'POST', body: form });
      if (!res.ok) throw new Error(`uploading ${label} answered ${res.status}: ${await res.text()}`);
    }
  }
  return api(lookout, 'POST', '/train', {});
}

export async function setServerRecognizer(lookout: Lookout, model: RecognitionModel): Promise<void> {
  await api(lookout, 'PUT', '/models/config', { recognition_model: model });
}

/**
 * The server's answer for comparing with the browser's: without the per-face `detection_method`, a field the REST
 * API adds for the original service's clients (the same as the answer's own `detection_method`).
 */
export async function recognizeOnServer(lookout: Lookout, rel: string): Promise<RecognizeResponse> {
  const answer = await api<RecognizeResponse>(lookout, 'POST', '/recognize', { image: testImage(rel).toString('base64') });
  if (answer.faces.some((f) => f.detection_method !== answer.detection_method))
    throw new Error(`a face's detection_method differs from the answer's: ${JSON.stringify(answer)}`);
  return { ...answer, faces: answer.faces.map(({ detection_method: _compat, ...face }) => face) };
}

export function detectObjectsOnServer(lookout: Lookout, rel: string): Promise<ObjectDetectionResponse> {
  return api(lookout, 'POST', '/objects/detect', { image: testImage(rel).toString('base64') });
}

/**
 * Serves the trained model files the way GET /api/models/trained does, from the server's data directory, for
 * a server build that does not have that endpoint (yet). Returns false when the real endpoint answers.
 */
export async function serveTrainedModelsIfMissing(page: Page, lookout: Lookout): Promise<boolean> {
  const res = await fetch(`${lookout.url}/api/models/trained`);
  if (res.status !== 404) return false;
  const dir = path.join(lookout.dataDir, 'models');
  const file = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.readFileSync(path.join(dir, name), 'utf8') : null);
  await page.context().route('**/api/models/trained**', (route) => {
    const url = new URL(route.request().url());
    const lbph = file('training.yml');
    const embedding = file('embeddings.json');
    if (url.pathname.endsWith('/lbph')) return route.fulfill({ status: lbph ? 200 : 404, contentType: 'text/yaml', body: lbph ?? '' });
    if (url.pathname.endsWith('/embedding'))
      return route.fulfill({ status: embedding ? 200 : 404, contentType: 'application/json', body: embedding ?? '' });
    return route.fulfill({
      json: {
        version: lbph ? 'local' : null,
        lbph: { available: lbph !== null, url: '/api/models/trained/lbph' },
        embedding: { available: embedding !== null, url: '/api/models/trained/embedding' },
      },
    });
  });
  return true;
}

/** Opens the bench with parameters and waits for its summary (or its error). */
export type { BenchResult };

export async function runBench(page: Page, baseUrl: string, params: Record<string, string>, timeoutMs = 120_000): Promise<BenchResult> {
  await page.goto(`${baseUrl}/bench.html?${new URLSearchParams(params)}`);
  await page.waitForFunction(
    () => {
      const w = globalThis as unknown as { __benchResult?: unknown; __benchError?: string };
      return w.__benchResult !== undefined || w.__benchError !== undefined;
    },
    undefined,
    { timeout: timeoutMs },
  );
  const { result, error } = await page.evaluate(() => {
    const w = globalThis as unknown as { __benchResult?: BenchResult; __benchError?: string };
    return { result: w.__benchResult, error: w.__benchError };
  });
  if (error !== undefined || !result) throw new Error(`the bench failed: ${error}`);
  return result;
}

/** Faces as boxes and labels only, sorted by position (the fields that must match exactly across engines). */
export function boxesAndLabels(faces: readonly FaceResult[]): { x: number; y: number; w: number; h: number; label: string }[] {
  return faces.map(({ x, y, w, h, label }) => ({ x, y, w, h, label })).sort((a, b) => a.x - b.x || a.y - b.y);
}
