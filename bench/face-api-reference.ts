/**
 * face-api as the reference the embedding recognizer is compared with (bench and tests): a face-api
 * FaceDetection for an exact integer box, so face-api's own landmark + descriptor pipeline sees the same face
 * ours does (face-api stores boxes relative to the image, which can round).
 */
import type { Rect } from '../shared/image/types.js';

// face-api's node-wasm bundle is untyped CommonJS.
type FaceApi = any;

export function exactFaceApiDetection(faceapi: FaceApi, box: Rect, width: number, height: number): unknown {
  class Exact extends faceapi.FaceDetection {
    constructor() {
      super(1, new faceapi.Rect(box.x / width, box.y / height, box.width / width, box.height / height), { width, height });
      (this as unknown as { _box: unknown })._box = new faceapi.Box(box);
    }
    forSize() {
      return this;
    }
  }
  return new Exact();
}
