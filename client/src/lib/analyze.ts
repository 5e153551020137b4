/**
 * Where pages send a frame to be analysed: the server's engines over the API, or the same shared/ engines in
 * this browser (a Web Worker). Pages talk to a FaceAnalyzer / ObjectAnalyzer, never to either directly. A frame is a
 * canvas at the picture's own resolution (camera.capture() or fileToCanvas()); every box in a result is in
 * that canvas's pixels.
 */
import { createRoot, createSignal } from 'solid-js';
import type { ObjectDetectionResponse, RecognizeResponse } from '../../../shared/api/index';
import { canvasPixels } from '../engine/pixels';
import { ModelsRefusedError } from '../engine/model-sync';
import { api } from './api';
import {
  activeRecognitionModel,
  browserEngine,
  engineRules,
  engineWithModels,
  startBrowserEngine,
  type BrowserEngineState,
} from './browser-engine';
import { canvasToDataUrl, fitWithin } from './images';
import { recordResult } from './results';
import { serverStatus } from './server-status';

export interface FaceAnalyzer {
  /** Where the work is done, for the page to say so. */
  readonly where: 'server' | 'browser';
  recognize(frame: HTMLCanvasElement, signal?: AbortSignal): Promise<RecognizeResponse>;
}

export interface ObjectAnalyzer {
  readonly where: 'server' | 'browser';
  /** `confidence` is the minimum score (0..1) an object must have; the detector's default when left out. */
  detect(frame: HTMLCanvasElement, confidence?: number, signal?: AbortSignal): Promise<ObjectDetectionResponse>;
}

/**
 * What the server gets for a frame. A photo goes up as PNG, lossless: the server then decodes the very pixels this
 * browser analyses (Chromium and sharp decode a JPEG to the same pixels), so a photo gives the same faces on either
 * side. Re-encoding it as JPEG changed enough pixels for the cascade to find an eighth "face" in sample5.jpg. A live
 * camera frame stays a JPEG: several a second, and consecutive frames differ anyway.
 */
export function serverImage(frame: HTMLCanvasElement): string {
  if (liveFrames.has(frame)) return canvasToDataUrl(frame);
  const png = frame.toDataURL('image/png');
  // A very detailed photo can make a PNG too large for the server's body limit (MAX_BODY_BYTES, 10 MB by default):
  // then a JPEG it is, close to the pixels but not the same.
  return png.length <= MAX_LOSSLESS_CHARS ? png : canvasToDataUrl(frame, 0.95);
}

/** The largest PNG data URL sent (8 MB of base64 is 6 MB of PNG, about 2 bytes a pixel at MAX_PHOTO_SIDE). */
export const MAX_LOSSLESS_CHARS = 8 * 1024 * 1024;

/** The server's engines: the frame goes up as a data URL (serverImage). */
export const serverFaceAnalyzer: FaceAnalyzer = {
  where: 'server',
  // #26 sightings: a live frame is `camera` (one sighting per face track per interval), a photo `page`.
  recognize: (frame, signal) => api.recognize(serverImage(frame), signal, { source: liveFrames.has(frame) ? 'camera' : 'page' }),
};

export const serverObjectAnalyzer: ObjectAnalyzer = {
  where: 'server',
  detect: (frame, confidence, signal) => api.detectObjects(serverImage(frame), confidence, signal),
};

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw new DOMException('The analysis was cancelled.', 'AbortError');
}

/**
 * Which in-browser results go to the server's history (POST /api/results, queued while offline): a result
 * whose people or object classes differ from the last one kept for that page, or the same again after a
 * minute; never an empty one. A live camera gives several results a second: keeping each would flood it.
 */
const lastKept = new Map<string, { key: string; at: number }>();
function worthKeeping(page: string, names: string[]): boolean {
  if (names.length === 0) return false;
  const key = [...names].sort().join(',');
  const last = lastKept.get(page);
  if (last && last.key === key && Date.now() - last.at < 60_000) return false;
  lastKept.set(page, { key, at: Date.now() });
  return true;
}

/** #26 sightings: faces of a kept in-browser result carry their crop, at most this many per result. */
const CROPS_MAX = 10;
const CROP_MAX_SIDE = 160;
const CROP_MAX_BYTES = 32 * 1024;

/**
 * A face's crop for the server's sightings, as the server makes them: the box widened by 40% each side (within the
 * frame), at most 160 px, JPEG of at most 32 KB, as base64; undefined when it cannot be made that small.
 */
function faceCrop(frame: HTMLCanvasElement, f: { x: number; y: number; w: number; h: number }): string | undefined {
  const left = Math.max(0, Math.floor(f.x - f.w * 0.4));
  const top = Math.max(0, Math.floor(f.y - f.h * 0.4));
  const width = Math.min(frame.width, Math.ceil(f.x + f.w * 1.4)) - left;
  const height = Math.min(frame.height, Math.ceil(f.y + f.h * 1.4)) - top;
  if (width < 1 || height < 1) return undefined;
  const scale = Math.min(1, CROP_MAX_SIDE / Math.max(width, height));
  const canvas = document.createElement('canvas');
  canvas.width = Math.max(1, Math.round(width * scale));
  canvas.height = Math.max(1, Math.round(height * scale));
  const ctx = canvas.getContext('2d');
  if (!ctx) return undefined;
  ctx.drawImage(frame, left, top, width, height, 0, 0, canvas.width, canvas.height);
  for (const quality of [0.85, 0.6]) {
    const url = canvas.toDataURL('image/jpeg', quality);
    const base64 = url.slice(url.indexOf(',') + 1);
    if (url.startsWith('data:image/jpeg') && (base64.length * 3) / 4 <= CROP_MAX_BYTES) return base64;
  }
  return undefined;
}

/** The faces of a result to keep, the first CROPS_MAX with their crops (a crop that fails is left out). */
function withCrops<F extends { x: number; y: number; w: number; h: number }>(
  frame: HTMLCanvasElement,
  faces: F[],
): (F & { crop?: string })[] {
  return faces.map((f, i) => {
    if (i >= CROPS_MAX) return f;
    try {
      const crop = faceCrop(frame, f);
      return crop ? { ...f, crop } : f;
    } catch {
      return f;
    }
  });
}

function backendName(): string | undefined {
  return browserEngine.info()?.backend.backend;
}

/** Canvases holding live camera frames (AnalysisCamera marks them). */
const liveFrames = new WeakSet<HTMLCanvasElement>();

/**
 * Marks a canvas as a live camera frame: the in-browser engine then gets it as an ImageBitmap, moved to its
 * worker and read into pixels there, so the page never waits on a pixel read. A photo is not marked: its
 * pixels are read here (getImageData), the exact bytes the server-equality tests pin down.
 */
export function markLiveFrame(canvas: HTMLCanvasElement): void {
  liveFrames.add(canvas);
}

/** What the engine worker gets for a frame: a bitmap for a live frame, RGBA pixels for a photo. */
async function enginePixels(frame: HTMLCanvasElement): Promise<ImageBitmap | ImageData> {
  return liveFrames.has(frame) ? createImageBitmap(frame) : canvasPixels(frame);
}

/** The same shared/ engines in a Web Worker: no round trip, and they keep working offline. */
export const browserFaceAnalyzer: FaceAnalyzer = {
  where: 'browser',
  async recognize(frame, signal) {
    const engine = await engineWithModels().catch((err: unknown) => {
      if (err instanceof ModelsRefusedError) return null;
      throw err;
    });
    // The server refuses the templates to this account (they are for kiosks and devices): it recognises instead,
    // and the page says why (EngineChoice).
    if (!engine) return serverFaceAnalyzer.recognize(frame, signal);
    throwIfAborted(signal);
    const model = activeRecognitionModel(serverStatus.ready()?.recognition_model);
    const {
      timing: _timing,
      roundTripMs: _rt,
      ...response
    } = await engine.recognize(await enginePixels(frame), { recognition_model: model, rules: engineRules() });
    throwIfAborted(signal);
    if (
      worthKeeping(
        'recognize',
        response.faces.map((f) => f.label),
      )
    ) {
      void recordResult({
        kind: 'recognition',
        engine: 'browser',
        backend: backendName(),
        detection_method: response.detection_method,
        recognition_model: response.recognition_model,
        // #26 sightings: the models the decision was made with, as the server's own sightings say.
        model_version: browserEngine.modelVersion() ?? undefined,
        image_width: frame.width,
        image_height: frame.height,
        // #26 sightings: each face's crop, kept by the server as a sighting (source browser) when it syncs.
        faces: withCrops(frame, response.faces),
      });
    }
    return response;
  },
};

export const browserObjectAnalyzer: ObjectAnalyzer = {
  where: 'browser',
  async detect(frame, confidence, signal) {
    const engine = await startBrowserEngine();
    throwIfAborted(signal);
    const { objects, count, summary } = await engine.detectObjects(await enginePixels(frame), confidence);
    throwIfAborted(signal);
    if (
      worthKeeping(
        'objects',
        objects.map((o) => o.class_name),
      )
    ) {
      void recordResult({
        kind: 'objects',
        engine: 'browser',
        backend: backendName(),
        image_width: frame.width,
        image_height: frame.height,
        objects,
      });
    }
    return { objects, count, summary };
  },
};

export type Place = 'browser' | 'server';
export type AnalysisPage = 'recognize' | 'objects';

const placeKey = (page: AnalysisPage) => `lookout.place.${page}`;

/** Each page's choice ("in this browser" / "on the server"), remembered on this device; null: not chosen. */
const choices = createRoot(() => {
  const read = (page: AnalysisPage): Place | null => {
    const v = localStorage.getItem(placeKey(page));
    return v === 'browser' || v === 'server' ? v : null;
  };
  const [recognize, setRecognize] = createSignal(read('recognize'));
  const [objects, setObjects] = createSignal(read('objects'));
  return { recognize: { get: recognize, set: setRecognize }, objects: { get: objects, set: setObjects } };
});

export function choosePlace(page: AnalysisPage, place: Place): void {
  localStorage.setItem(placeKey(page), place);
  choices[page].set(place);
}

/** The rule: the person's choice, else in this browser unless its engine failed to load (then the server). */
export function decidePlace(chosen: Place | null, engine: BrowserEngineState): Place {
  return chosen ?? (engine === 'failed' ? 'server' : 'browser');
}

/** Where a page's analysis runs now. */
export function placeFor(page: AnalysisPage): Place {
  // Faces are named in the browser with the trained models, which the server gives only to kiosks and devices.
  if (page === 'recognize' && browserEngine.modelsRefused()) return 'server';
  return decidePlace(choices[page].get(), browserEngine.state());
}

/** Whether the place was chosen by the person (else it is the default). */
export function placeChosen(page: AnalysisPage): boolean {
  return choices[page].get() !== null;
}

/** The analyzers pages use (reactive: call at each analysis). The one place that chooses the engine. */
export function faceAnalyzer(): FaceAnalyzer {
  return placeFor('recognize') === 'browser' ? browserFaceAnalyzer : serverFaceAnalyzer;
}

export function objectAnalyzer(): ObjectAnalyzer {
  return placeFor('objects') === 'browser' ? browserObjectAnalyzer : serverObjectAnalyzer;
}

/**
 * The largest side a photo is analysed at. A 12-megapixel phone photo as base64 JPEG is several megabytes;
 * faces and objects are found just as well at this size, and the request stays well under the server's limit.
 */
export const MAX_PHOTO_SIDE = 2048;

/** The photo as analysed: scaled down to MAX_PHOTO_SIDE when larger. */
export function limitSize(canvas: HTMLCanvasElement, maxSide = MAX_PHOTO_SIDE): HTMLCanvasElement {
  return fitWithin(canvas, maxSide);
}
