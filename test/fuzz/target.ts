/**
 * The service under fuzz: the real app (createService) with its real workers, storage, object detector, and
 * test doubles for the LLM and the PPE detector (real HTTP servers on 127.0.0.1), in a root folder laid out so
 * that anything written outside DATA_DIR is seen:
 *
 *   <root>/data      DATA_DIR (PPE_DATASET_DIR inside it, at data/ppe-dataset)
 *   <root>/sibling   a folder beside it with a canary file whose content must never be served
 *   <root>/tmp       the process's TMPDIR (set by the test file before anything loads sharp or the workers)
 *
 * Cases run in-process through `app.fetch` (fast, no sockets); the same app is also served on 127.0.0.1 for the
 * raw-socket cases, every answer there checked against the contract by `checkedFetch`.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { createService, type Service } from '../../server/app.js';
import { loadSettings } from '../../server/config/settings.js';
import { createLogger } from '../../server/logger.js';
import { checkedFetch } from '../helpers/contract.js';
import { type OpenAIDouble, startOpenAIDouble } from '../helpers/openai-double.js';
import { type PpeDetectorDouble, startPpeDetectorDouble } from '../helpers/ppe-detector-double.js';
import { REPO_ROOT } from '../helpers/test-server.js';
import { OutsideWatch, snapshot, type Snapshot } from './files.js';
import { type FuzzRequest, type FuzzState, resolve } from './request.js';

export interface Answer {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
  /** The request as sent (placeholders filled). */
  sent: FuzzRequest;
}

export interface FuzzTarget {
  root: string;
  dataDir: string;
  tmpDir: string;
  canary: string;
  service: Service;
  /** http://127.0.0.1:<port> of the same app served over real HTTP. */
  url: string;
  /** Contract problems of answers served over real HTTP so far. */
  httpProblems: string[];
  /** 5xx answers the app gave over real HTTP so far (whether or not the client got to read them). */
  httpServerErrors: string[];
  /** Waits for the checks of answers still streaming over real HTTP. */
  settled(): Promise<void>;
  state: FuzzState;
  watch: OutsideWatch;
  /** Everything beside DATA_DIR as it was at the start. */
  outsideAtStart: Snapshot;
  send(req: FuzzRequest): Promise<Answer>;
  close(): Promise<void>;
}

export interface TargetOptions {
  /** The root folder (made by the caller, whose TMPDIR is <root>/tmp). */
  root: string;
  /** Engines on (with doubles) or all optional engines off. */
  engines: 'on' | 'off';
  /** Settings beyond the fuzz run's own (e.g. LOG_LEVEL to see what a case did). */
  env?: Record<string, string>;
}

const ANSWER_TIMEOUT_MS = 60_000;

async function waitFor(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`fuzz target: ${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startFuzzTarget({ root, engines, env: extra = {} }: TargetOptions): Promise<FuzzTarget> {
  const dataDir = path.join(root, 'data');
  const sibling = path.join(root, 'sibling');
  const tmpDir = path.join(root, 'tmp');
  for (const dir of [dataDir, sibling, tmpDir]) fs.mkdirSync(dir, { recursive: true });
  const canary = `canary-${crypto.randomUUID()}`;
  fs.writeFileSync(path.join(sibling, 'canary.txt'), canary);
  fs.writeFileSync(path.join(root, 'canary.txt'), canary);

  let llm: OpenAIDouble | null = null;
  let ppe: PpeDetectorDouble | null = null;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    WORKERS: '2',
    LOG_LEVEL: 'silent',
    // Small limits keep thousands of cases fast and make the limits themselves reachable.
    MAX_IMAGE_PIXELS: '4000000',
    MAX_BODY_BYTES: String(1024 * 1024),
    RESULTS_MAX: '200',
    PPE_HISTORY_MAX: '50',
  };
  if (engines === 'on') {
    llm = await startOpenAIDouble();
    ppe = await startPpeDetectorDouble({ scene: 'equipped' });
    Object.assign(env, {
      CHAT_ENDPOINT: llm.url,
      PPE_ENABLED: 'true',
      PPE_ENDPOINT: ppe.url,
      PPE_CHECK_INTERVAL_MS: '500',
      PPE_DATASET_DIR: path.join(dataDir, 'ppe-dataset'),
      OBJECT_WORKERS: '1',
    });
  } else {
    Object.assign(env, {
      WORKERS: '1',
      CHAT_ENABLED: 'false',
      PPE_ENABLED: 'false',
      OBJECT_DETECTION_ENABLED: 'false',
      EMBEDDING_ENABLED: 'false',
    });
  }
  const settings = loadSettings({ ...env, ...extra }, REPO_ROOT);
  const service = await createService(settings, createLogger(settings.logLevel));
  const checked = checkedFetch(service.app.fetch);
  const httpServerErrors: string[] = [];
  // The app's own status, before Node writes it: a client whose request broke mid-body never reads it.
  const recorded = async (req: Request): Promise<Response> => {
    const res = await checked.fetch(req);
    if (res.status >= 500) httpServerErrors.push(`${req.method} ${new URL(req.url).pathname.slice(0, 120)} -> ${res.status}`);
    return res;
  };
  const server: ServerType = await new Promise((done) => {
    const s = serve({ fetch: recorded, port: 0, hostname: '127.0.0.1' }, () => done(s));
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;

  const state: FuzzState = { uploads: [], etag: null };

  const send = async (raw: FuzzRequest): Promise<Answer> => {
    const req = resolve(raw, state);
    const bodyless = req.method === 'GET' || req.method === 'HEAD';
    const request = new Request(`${origin}${req.path}`, {
      method: req.method,
      headers: req.headers,
      body: bodyless || !req.body ? undefined : (req.body as Uint8Array<ArrayBuffer>),
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no complete answer within ${ANSWER_TIMEOUT_MS} ms`)), ANSWER_TIMEOUT_MS);
    });
    try {
      const res = await Promise.race([service.app.fetch(request), timeout]);
      const bytes = new Uint8Array(await Promise.race([res.arrayBuffer(), timeout]));
      return { status: res.status, headers: res.headers, bytes, text: Buffer.from(bytes).toString('utf8'), sent: req };
    } finally {
      clearTimeout(timer);
    }
  };

  const get = async (p: string) => (await send({ route: 'setup', method: 'GET', path: p, headers: [], note: 'setup' })).text;
  if (engines === 'on') {
    // Fuzz the engines once they answer, so a 503 is never expected (#38 2: the object detector loads on the
    // first request, which waits for it: `available` from the start).
    await waitFor('the object detector loading', async () => JSON.parse(await get('/api/objects/status')).available === true, 120_000);
    await waitFor('the PPE detector check', async () => JSON.parse(await get('/api/ppe/status')).reachable === true);
    await waitFor('the LLM check', async () => JSON.parse(await get('/api/chat/status')).reachable === true);
  }

  const skipData = (rel: string) => rel === 'data' || rel.startsWith(`data${path.sep}`);
  const watch = new OutsideWatch(root, 'data', [sibling, tmpDir]);
  return {
    root,
    dataDir,
    tmpDir,
    canary,
    service,
    url: origin,
    httpProblems: checked.problems,
    httpServerErrors,
    settled: () => checked.settled(),
    state,
    watch,
    outsideAtStart: snapshot(root, skipData),
    send,
    async close() {
      watch.close();
      await checked.settled();
      await new Promise<void>((done) => server.close(() => done()));
      await service.close();
      await llm?.close();
      await ppe?.close();
    },
  };
}

/** Everything beside DATA_DIR now (to compare with `outsideAtStart`). */
export function outsideNow(target: FuzzTarget): Snapshot {
  return snapshot(target.root, (rel) => rel === 'data' || rel.startsWith(`data${path.sep}`));
}
