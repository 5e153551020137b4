/**
 * Where pages send a frame to be analysed. Pages talk to a FaceAnalyzer / ObjectAnalyzer, never to the API,
 * so an in-browser engine can later replace the server one here without any page changing. A frame is a
 * canvas at the picture's own resolution (camera.capture() or fileToCanvas()); every box in a result is in
 * that canvas's pixels.
 */
import type { ObjectDetectionResponse, RecognizeResponse } from '../../../shared/api/contract';
import { api } from './api';
import { canvasToDataUrl } from './images';

export interface FaceAnalyzer {
  /** Where the work is done, for the page to say so ("server" now, an in-browser engine later). */
  readonly where: 'server' | 'browser';
  recognize(frame: HTMLCanvasElement, signal?: AbortSignal): Promise<RecognizeResponse>;
}

export interface ObjectAnalyzer {
  readonly where: 'server' | 'browser';
  /** `confidence` is the minimum score (0..1) an object must have; the detector's default when left out. */
  detect(frame: HTMLCanvasElement, confidence?: number, signal?: AbortSignal): Promise<ObjectDetectionResponse>;
}

/** The server's engines: the frame goes up as a JPEG data URL. */
export const serverFaceAnalyzer: FaceAnalyzer = {
  where: 'server',
  recognize: (frame, signal) => api.recognize(canvasToDataUrl(frame), signal),
};

export const serverObjectAnalyzer: ObjectAnalyzer = {
  where: 'server',
  detect: (frame, confidence, signal) => api.detectObjects(canvasToDataUrl(frame), confidence, signal),
};

/** The analyzers pages use. The one place to choose another engine. */
export function faceAnalyzer(): FaceAnalyzer {
  return serverFaceAnalyzer;
}

export function objectAnalyzer(): ObjectAnalyzer {
  return serverObjectAnalyzer;
}

/**
 * The largest side a photo is analysed at. A 12-megapixel phone photo as base64 JPEG is several megabytes;
 * faces and objects are found just as well at this size, and the request stays well under the server's limit.
 */
export const MAX_PHOTO_SIDE = 2048;

/** The canvas itself when it is small enough, else a scaled-down copy (aspect ratio kept). */
export function limitSize(canvas: HTMLCanvasElement, maxSide = MAX_PHOTO_SIDE): HTMLCanvasElement {
  const scale = maxSide / Math.max(canvas.width, canvas.height);
  if (scale >= 1) return canvas;
  const out = document.createElement('canvas');
  out.width = Math.max(1, Math.round(canvas.width * scale));
  out.height = Math.max(1, Math.round(canvas.height * scale));
  const ctx = out.getContext('2d')!;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(canvas, 0, 0, out.width, out.height);
  return out;
}
