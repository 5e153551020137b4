/**
 * The in-browser engine for the whole app: one Web Worker (client/src/engine), started on first use, kept for
 * the session. It holds the server's trained models, kept current by their own timer (engine/model-sync.ts:
 * every few seconds while the page is visible, and when it comes back into view), never by a frame's
 * analysis: a frame only waits for the very first models. Offline, the service worker answers with the last
 * models it saw, so a kiosk keeps recognising. A model trained in this browser is kept on the device
 * (pwa/local-model.ts) and is what every page and tab recognises with until the server's model replaces it.
 */
import { createRoot, createSignal } from 'solid-js';
import type { RecognitionModel } from '../../../shared/api/index';
import { createEngine, type EngineClient, type InitResult, type ObjectBackend, type TrainResult } from '../engine/client';
import { type ModelDownload, ModelSync } from '../engine/model-sync';
import { browserSegments } from '../engine/compact-sync';
import { type EngineRules, RuleSync } from '../engine/rule-sync';
import { authFetch } from '../auth/session';
import { localModelStore, type LocalModel } from '../pwa/local-model';

export type BrowserEngineState = 'idle' | 'loading' | 'ready' | 'failed';

/** How often a running page asks whether training produced new models. */
export const MODEL_CHECK_MS = 5000;

const LAST_MODEL_KEY = 'lookout.recognitionModel';

const store = createRoot(() => {
  const [state, setState] = createSignal<BrowserEngineState>('idle');
  const [info, setInfo] = createSignal<InitResult | null>(null);
  const [error, setError] = createSignal('');
  const [modelVersion, setModelVersion] = createSignal<string | null>(null);
  const [localModel, setLocalModel] = createSignal<LocalModel | null>(null);
  const [modelsRefused, setModelsRefused] = createSignal('');
  const [modelDownload, setModelDownload] = createSignal<ModelDownload | null>(null);
  const [objectBackend, setObjectBackend] = createSignal<ObjectBackend | null>(null);
  return {
    objectBackend,
    setObjectBackend,
    modelDownload,
    setModelDownload,
    state,
    setState,
    info,
    setInfo,
    error,
    setError,
    modelVersion,
    setModelVersion,
    localModel,
    setLocalModel,
    modelsRefused,
    setModelsRefused,
  };
});

export const browserEngine = {
  state: store.state,
  /** Which tfjs backend runs (and why others were skipped), once started. */
  info: store.info,
  error: store.error,
  /** Version of the trained models loaded in the browser (null: none trained). */
  modelVersion: store.modelVersion,
  /** The model trained in this browser that recognition uses now (null: the server's). */
  localModel: store.localModel,
  /**
   * Why the server refuses the trained models to this account ('' while it gives them): the templates are for
   * kiosks and devices (biometric-device). Face recognition then runs on the server (lib/analyze.ts).
   */
  modelsRefused: store.modelsRefused,
  /** What the last download of the server's models cost (#27: compact segments fetched, sizes); null: none yet. */
  modelDownload: store.modelDownload,
  /** What detects objects now (WASM, or WebGPU once warm) and how WebGPU's warm-up goes; null before the engine. */
  objectBackend: store.objectBackend,
};

let starting: Promise<EngineClient> | null = null;
let sync: ModelSync | null = null;

const visible = () => document.visibilityState === 'visible';

/** How often a running page asks for the server's decision rules (a site's thresholds change rarely). */
export const RULES_CHECK_MS = 30_000;

// The server's decision rules, kept on the device for offline use; read before the engine starts.
const rules = new RuleSync({ fetch: authFetch, storage: typeof localStorage === 'undefined' ? null : localStorage });
let rulesTimer: ReturnType<typeof setInterval> | null = null;

/** The rules the in-browser engine names faces with (the server's, the kept copy offline; {}: the defaults). */
export function engineRules(): EngineRules {
  return rules.rules;
}

/** Asks the server for its decision rules now (after a change on the Models page, say). */
export function refreshEngineRules(): Promise<EngineRules> {
  return rules.check();
}

function startRuleSync(): void {
  if (rulesTimer !== null) return;
  void rules.ensureChecked();
  rulesTimer = setInterval(() => {
    if (visible()) void rules.check();
  }, RULES_CHECK_MS);
  const now = () => {
    if (visible()) void rules.check();
  };
  document.addEventListener('visibilitychange', now);
  window.addEventListener('focus', now);
}

/** The engine's model sync, started with the engine: on its timer, and at once when the page is shown again. */
function startModelSync(engine: EngineClient): ModelSync {
  const s = new ModelSync({
    install: (models) => engine.setModel(models),
    onVersion: (v) => store.setModelVersion(v),
    onLocal: (m) => store.setLocalModel(m),
    onRefused: (refusal) => store.setModelsRefused(refusal?.message ?? ''),
    onDownload: (d) => store.setModelDownload(d),
    // #27: the compact model's segments stay on the device, so a reload or an offline start fetches none again.
    segments: browserSegments(),
    local: localModelStore,
    base: document.baseURI,
    // The trained model is an API answer: under auth it needs the bearer token.
    fetch: authFetch,
  });
  s.start(MODEL_CHECK_MS, visible);
  const now = () => {
    if (visible()) void s.check().catch(() => undefined);
  };
  document.addEventListener('visibilitychange', now);
  window.addEventListener('focus', now);
  return s;
}

/** Starts the worker (once) and resolves when its cascade and tfjs backend are ready. */
export function startBrowserEngine(): Promise<EngineClient> {
  starting ??= (async () => {
    store.setState('loading');
    const engine = createEngine();
    engine.onObjectBackend((b) => store.setObjectBackend({ ...b }));
    try {
      const init = await engine.init({ backend: 'auto' });
      store.setObjectBackend({ ...engine.objectBackend });
      store.setInfo(init);
      store.setState('ready');
      sync = startModelSync(engine);
      startRuleSync();
      // Fetched now, so the first frame rarely waits; a failure is reported by the frame that needs them.
      void sync.check().catch(() => undefined);
      return engine;
    } catch (err) {
      engine.terminate();
      starting = null;
      store.setError(err instanceof Error ? err.message : String(err));
      store.setState('failed');
      throw err;
    }
  })();
  return starting;
}

/** The engine with trained models installed (the first check's, at least), ready to recognise. */
export async function engineWithModels(): Promise<EngineClient> {
  const engine = await startBrowserEngine();
  // The first answer of the rules too (it never rejects: offline, the kept or default rules apply).
  await Promise.all([sync!.ensureLoaded(), rules.ensureChecked()]);
  return engine;
}

/**
 * Trains the in-browser recognizers from photos taken on this device (a kiosk without its server): the same
 * shared/ training as the server's, installed at once and kept on the device (every page and tab, after a
 * reload too) until the server has a model that replaces it. The photos go to the server through the offline
 * queue (the caller queues them), and the server trains for good.
 */
export async function trainInBrowser(samples: { label: string; blob: Blob }[]): Promise<TrainResult> {
  const engine = await startBrowserEngine();
  // Know the server's model first, so the kept model records which one it was trained over.
  await sync!.ensureLoaded().catch(() => undefined);
  // Recognition here uses the embedding recognizer: train it too (LBPH alone would leave her unknown there).
  if (activeRecognitionModel(undefined) === 'embedding') await engine.loadEmbedding();
  const images = await Promise.all(samples.map(async (s) => ({ label: s.label, image: await createImageBitmap(s.blob) })));
  return sync!.trainLocally(async () => {
    const { roundTripMs: _rt, ...result } = await engine.train(images);
    const model =
      result.total_faces > 0
        ? { labels: result.labels, lbphYaml: result.files.lbphYaml, embeddingsJson: result.files.embeddingsJson }
        : null;
    return { result, model };
  });
}

/** The model kept from a training in this browser, read from the device (before the engine starts, too). */
export async function storedLocalModel(): Promise<LocalModel | null> {
  return localModelStore.get().catch(() => null);
}

/** The recognizer the server has active (remembered for offline use), LBPH before anything is known. */
export function activeRecognitionModel(serverSays: RecognitionModel | undefined): RecognitionModel {
  if (serverSays) {
    localStorage.setItem(LAST_MODEL_KEY, serverSays);
    return serverSays;
  }
  const last = localStorage.getItem(LAST_MODEL_KEY);
  return last === 'embedding' ? 'embedding' : 'lbph';
}

/** "WASM (SIMD, 2 threads)", "WebGL", "WebGPU": what the page says runs the models. */
export function backendLabel(init: InitResult | null): string {
  if (!init) return 'starting…';
  const b = init.backend;
  if (b.backend === 'wasm') {
    const w = b.wasm;
    return w ? `WASM (${w.simd ? 'SIMD' : 'no SIMD'}, ${w.threads ? `${w.threadsCount} threads` : 'one thread'})` : 'WASM';
  }
  return b.backend === 'webgl' ? 'WebGL' : b.backend === 'webgpu' ? 'WebGPU' : b.backend;
}
