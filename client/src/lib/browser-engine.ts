/**
 * The in-browser engine for the whole app: one Web Worker (client/src/engine), started on first use, kept for
 * the session. It holds the server's trained models, re-checked at most every few seconds by their version
 * (GET /api/models/trained is tiny; the model files are downloaded only when the version changed). Offline,
 * the service worker answers with the last models it saw, so a kiosk keeps recognising.
 */
import { createRoot, createSignal } from 'solid-js';
import type { RecognitionModel, TrainedModelsResponse } from '../../../shared/api/index';
import { createEngine, type EngineClient, type InitResult, type TrainResult } from '../engine/client';
import { fetchTrainedModels } from '../engine/models';

export type BrowserEngineState = 'idle' | 'loading' | 'ready' | 'failed';

/** How often a running page asks whether training produced new models. */
export const MODEL_CHECK_MS = 5000;

const LAST_MODEL_KEY = 'lookout.recognitionModel';

const store = createRoot(() => {
  const [state, setState] = createSignal<BrowserEngineState>('idle');
  const [info, setInfo] = createSignal<InitResult | null>(null);
  const [error, setError] = createSignal('');
  const [modelVersion, setModelVersion] = createSignal<string | null>(null);
  return { state, setState, info, setInfo, error, setError, modelVersion, setModelVersion };
});

export const browserEngine = {
  state: store.state,
  /** Which tfjs backend runs (and why others were skipped), once started. */
  info: store.info,
  error: store.error,
  /** Version of the trained models loaded in the browser (null: none trained). */
  modelVersion: store.modelVersion,
};

let starting: Promise<EngineClient> | null = null;
let lastCheck = 0;
let checking: Promise<void> | null = null;
let loadedVersion: string | null | undefined;
/**
 * Set while a model trained in this browser is installed: the server version it replaced. The server's model
 * (or the service worker's offline copy of it) at that same version must not overwrite it; a new training on
 * the server does.
 */
let localOver: { base: string | null | undefined } | null = null;

/** Starts the worker (once) and resolves when its cascade and tfjs backend are ready. */
export function startBrowserEngine(): Promise<EngineClient> {
  starting ??= (async () => {
    store.setState('loading');
    const engine = createEngine();
    try {
      const init = await engine.init({ backend: 'auto' });
      store.setInfo(init);
      store.setState('ready');
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

/** Brings the engine's trained models up to the server's (or the offline copy's) version. */
async function syncModels(engine: EngineClient): Promise<void> {
  if (performance.now() - lastCheck < MODEL_CHECK_MS && loadedVersion !== undefined) return;
  checking ??= (async () => {
    try {
      const res = await fetch('/api/models/trained', { cache: 'no-store' });
      if (!res.ok) throw new Error(`the server answered ${res.status} for the trained models`);
      const index = (await res.json()) as TrainedModelsResponse;
      if (localOver && index.version === localOver.base) {
        lastCheck = performance.now();
        return;
      }
      if (index.version !== loadedVersion || localOver) {
        const models = await fetchTrainedModels();
        await engine.setModel({ lbphYaml: models.lbphYaml, embeddingsJson: models.embeddingsJson });
        loadedVersion = models.version;
        localOver = null;
        store.setModelVersion(models.version);
      }
      lastCheck = performance.now();
    } catch (err) {
      // Unreachable and nothing cached: recognise with what is loaded (every face unknown if nothing is).
      if (loadedVersion === undefined) throw err;
    } finally {
      checking = null;
    }
  })();
  return checking;
}

/** The engine with the current trained models, ready to recognise. */
export async function engineWithModels(): Promise<EngineClient> {
  const engine = await startBrowserEngine();
  await syncModels(engine);
  return engine;
}

/**
 * Trains the in-browser recognizers from photos taken on this device (a kiosk without its server): the same
 * shared/ training as the server's, installed at once for this browser's recognition until the server has a
 * newer model. The photos still go to the server through the offline queue, which trains for good.
 */
export async function trainInBrowser(samples: { label: string; blob: Blob }[]): Promise<TrainResult> {
  const engine = await startBrowserEngine();
  const images = await Promise.all(samples.map(async (s) => ({ label: s.label, image: await createImageBitmap(s.blob) })));
  const { roundTripMs: _rt, ...result } = await engine.train(images);
  if (result.total_faces > 0) {
    localOver = { base: loadedVersion };
    loadedVersion = `local-${Date.now()}`;
    store.setModelVersion(loadedVersion);
  }
  return result;
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
