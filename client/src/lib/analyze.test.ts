import { beforeEach, describe, expect, it, vi } from 'vitest';

// The browser's globals the module reads when it loads (Node has neither).
const env = vi.hoisted(() => {
  const store = new Map<string, string>();
  (globalThis as { localStorage?: unknown }).localStorage = {
    getItem: (k: string) => store.get(k) ?? null,
    setItem: (k: string, v: string) => void store.set(k, v),
    removeItem: (k: string) => void store.delete(k),
  };
  return { store, engineState: 'idle' as 'idle' | 'loading' | 'ready' | 'failed', refused: '' };
});

const engine = { recognize: vi.fn(), detectObjects: vi.fn() };
const RULES = { lbph: { min: 4, max: 70, sureMax: 60, nearMax: 100, ratioMax: null, verifyMax: 60 } };
vi.mock('./browser-engine', () => ({
  browserEngine: { state: () => env.engineState, info: () => null, modelsRefused: () => env.refused, modelVersion: () => 'v-7' },
  engineWithModels: vi.fn(async () => engine),
  startBrowserEngine: vi.fn(async () => engine),
  activeRecognitionModel: (m: string | undefined) => m ?? 'lbph',
  // The server's decision rules (rule-sync.ts), as the engine gets them with every frame.
  engineRules: () => RULES,
}));
vi.mock('./server-status', () => ({ serverStatus: { ready: () => ({ recognition_model: 'lbph' }) } }));
vi.mock('./results', () => ({ recordResult: vi.fn(async () => 'id') }));
vi.mock('./api', () => ({ api: { recognize: vi.fn(async () => ({ via: 'server' })), detectObjects: vi.fn() } }));
vi.mock('./images', () => ({
  canvasToDataUrl: (_c: unknown, q?: number) => `data:image/jpeg;base64,${q ?? ''}`,
  fitWithin: (c: unknown) => c,
}));
vi.mock('../engine/pixels', () => ({ canvasPixels: vi.fn(() => ({ kind: 'pixels-read-on-the-page' })) }));

const { api } = await import('./api');
const { engineWithModels } = await import('./browser-engine');
const { canvasPixels } = await import('../engine/pixels');
const { recordResult } = await import('./results');
const {
  browserFaceAnalyzer,
  choosePlace,
  decidePlace,
  faceAnalyzer,
  markLiveFrame,
  MAX_LOSSLESS_CHARS,
  placeChosen,
  placeFor,
  serverImage,
} = await import('./analyze');

const canvas = (png = 'data:image/png;base64,') => ({ width: 640, height: 480, toDataURL: () => png }) as unknown as HTMLCanvasElement;
const bitmap = { kind: 'bitmap' };
const response = {
  faces: [{ x: 1, y: 2, w: 3, h: 4, label: 'grace', confidence: 90 }],
  count: 1,
  detection_method: 'local',
  recognition_model: 'lbph',
  trained: true,
};

beforeEach(() => {
  vi.clearAllMocks();
  vi.stubGlobal(
    'createImageBitmap',
    vi.fn(async () => bitmap),
  );
  engine.recognize.mockResolvedValue({ ...response, timing: { totalMs: 1 }, roundTripMs: 2 });
});

describe('where the analysis runs', () => {
  it('the rule: the person’s choice, else the browser, else the server when the browser engine failed', () => {
    expect(decidePlace(null, 'idle')).toBe('browser');
    expect(decidePlace(null, 'ready')).toBe('browser');
    expect(decidePlace(null, 'failed')).toBe('server');
    expect(decidePlace('server', 'ready')).toBe('server');
    // Chosen on purpose: the failure is shown rather than silently sent elsewhere.
    expect(decidePlace('browser', 'failed')).toBe('browser');
  });

  it('pages get the analyzer of the current place, and a choice is remembered on this device', () => {
    env.engineState = 'ready';
    expect(placeChosen('recognize')).toBe(false);
    expect(faceAnalyzer().where).toBe('browser');
    env.engineState = 'failed';
    expect(placeFor('recognize')).toBe('server');
    expect(faceAnalyzer().where).toBe('server');
    choosePlace('recognize', 'browser');
    expect(env.store.get('lookout.place.recognize')).toBe('browser');
    expect(placeChosen('recognize')).toBe(true);
    expect(faceAnalyzer().where).toBe('browser');
    choosePlace('recognize', 'server');
    env.engineState = 'ready';
    expect(faceAnalyzer().where).toBe('server');
    expect(placeFor('objects')).toBe('browser'); // each page has its own choice
  });

  it('the server analyzer sends the frame to the API', async () => {
    choosePlace('recognize', 'server');
    await expect(faceAnalyzer().recognize(canvas())).resolves.toEqual({ via: 'server' });
    // #26 sightings: a photo is `page`, a live frame `camera`.
    expect(api.recognize).toHaveBeenCalledWith('data:image/png;base64,', undefined, { source: 'page' });
    expect(engine.recognize).not.toHaveBeenCalled();
    const live = canvas();
    markLiveFrame(live);
    await faceAnalyzer().recognize(live);
    expect(api.recognize).toHaveBeenLastCalledWith('data:image/jpeg;base64,', undefined, { source: 'camera' });
  });

  it('sends a photo losslessly (the pixels the browser analyses), a live frame and an oversized PNG as JPEG', () => {
    expect(serverImage(canvas())).toBe('data:image/png;base64,');
    const live = canvas();
    markLiveFrame(live);
    expect(serverImage(live)).toBe('data:image/jpeg;base64,');
    expect(serverImage(canvas('x'.repeat(MAX_LOSSLESS_CHARS + 1)))).toBe('data:image/jpeg;base64,0.95');
  });
});

describe('the in-browser analyzer', () => {
  it('moves a live frame to the worker as an ImageBitmap, without reading its pixels on the page', async () => {
    const frame = canvas();
    markLiveFrame(frame);
    await expect(browserFaceAnalyzer.recognize(frame)).resolves.toEqual(response);
    expect(createImageBitmap).toHaveBeenCalledWith(frame);
    expect(canvasPixels).not.toHaveBeenCalled();
    expect(engine.recognize).toHaveBeenCalledWith(bitmap, { recognition_model: 'lbph', rules: RULES });
  });

  it('reads a photo’s exact pixels (the bytes the server comparison pins down)', async () => {
    await browserFaceAnalyzer.recognize(canvas());
    expect(createImageBitmap).not.toHaveBeenCalled();
    expect(engine.recognize).toHaveBeenCalledWith({ kind: 'pixels-read-on-the-page' }, { recognition_model: 'lbph', rules: RULES });
  });

  it('fails the frame with the reason when the models cannot be had, without running the engine', async () => {
    vi.mocked(engineWithModels).mockRejectedValueOnce(new Error('cannot reach the server to check the trained models'));
    await expect(browserFaceAnalyzer.recognize(canvas())).rejects.toThrow(/trained models/);
    expect(engine.recognize).not.toHaveBeenCalled();
  });

  it('recognises on the server when the server refuses the trained models to this account (no biometric-device)', async () => {
    const { ModelsRefusedError } = await import('../engine/model-sync');
    vi.mocked(engineWithModels).mockRejectedValueOnce(new ModelsRefusedError(403, 'this endpoint needs the role biometric-device'));
    await expect(browserFaceAnalyzer.recognize(canvas())).resolves.toEqual({ via: 'server' });
    expect(api.recognize).toHaveBeenCalledTimes(1);
    expect(engine.recognize).not.toHaveBeenCalled();
  });

  it('puts face recognition on the server once the models are refused, whatever was chosen; objects stay', () => {
    choosePlace('recognize', 'browser');
    choosePlace('objects', 'browser');
    env.engineState = 'ready';
    env.refused = 'this account may not download the trained models';
    try {
      expect(placeFor('recognize')).toBe('server');
      expect(faceAnalyzer().where).toBe('server');
      expect(placeFor('objects')).toBe('browser');
    } finally {
      env.refused = '';
    }
  });

  it('a cancelled analysis ends with an AbortError', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(browserFaceAnalyzer.recognize(canvas(), controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('keeps a result for the history only when the people change (or after a minute)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      // Past the minute of the results the tests above kept.
      vi.setSystemTime(Date.now() + 120_000);
      await browserFaceAnalyzer.recognize(canvas());
      await browserFaceAnalyzer.recognize(canvas());
      expect(recordResult).toHaveBeenCalledTimes(1);
      // With the version of the trained models it was made with (its sightings keep it).
      expect(recordResult).toHaveBeenCalledWith(expect.objectContaining({ engine: 'browser', model_version: 'v-7' }));
      engine.recognize.mockResolvedValueOnce({ ...response, faces: [], count: 0, timing: {}, roundTripMs: 0 });
      await browserFaceAnalyzer.recognize(canvas()); // nobody: nothing to keep
      expect(recordResult).toHaveBeenCalledTimes(1);
      vi.setSystemTime(Date.now() + 61_000);
      await browserFaceAnalyzer.recognize(canvas());
      expect(recordResult).toHaveBeenCalledTimes(2);
    } finally {
      vi.useRealTimers();
    }
  });
});
