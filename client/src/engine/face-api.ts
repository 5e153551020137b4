/**
 * face-api for the engine worker: its no-bundle build, which imports @tensorflow/tfjs itself and so shares
 * this worker's tfjs instance and backend (shared/embedding/engine.ts uses `faceapi.tf` for every tensor).
 *
 * One change: face-api's landmark net reads its output with the synchronous `dataSync()`. On WebGPU that read
 * goes through WebGPU canvases, which in a worker leaves the device unusable ("A valid external Instance
 * reference no longer exists" on the next read). The landmark net here runs the same forward pass, reads the
 * output asynchronously, and hands face-api a tensor that already holds the values, so face-api's own code
 * still turns them into landmarks. On WASM and WebGL it changes nothing but when the values are read.
 */
import type { DescriptorModelId } from '../../../shared/embedding/descriptor-models';
import type { EmbeddingEngineOptions, FaceApiModule, FaceLandmarkNetLike, TfTensorLike } from '../../../shared/embedding/engine';
import type { Tf } from './backend';

type FaceApi = typeof import('@vladmandic/face-api/dist/face-api.esm-nobundle.js');
type NetInput = Awaited<ReturnType<FaceApi['toNetInput']>>;
type Tensor2D = ReturnType<InstanceType<FaceApi['FaceLandmark68Net']>['forwardInput']>;

/**
 * Faces per forward pass: the [faces, 136] output must stay under WebGPU's CPU hand-off size (1000 values),
 * so that face-api's `unstack` and `dataSync` of the injected values run on the CPU.
 */
const FACES_PER_PASS = 7;

export async function loadFaceApi(tf: Tf): Promise<FaceApiModule> {
  const faceapi: FaceApi = await import('@vladmandic/face-api/dist/face-api.esm-nobundle.js');

  class LandmarkNet extends faceapi.FaceLandmark68Net {
    #ready: { input: NetInput; values: Float32Array; shape: [number, number] } | null = null;

    override forwardInput(input: NetInput): Tensor2D {
      const ready = this.#ready;
      if (ready && ready.input === input) return tf.tensor2d(ready.values, ready.shape) as unknown as Tensor2D;
      return super.forwardInput(input);
    }

    async #detectBatch(faces: TfTensorLike[]) {
      const input = await faceapi.toNetInput(faces as never);
      const output = tf.tidy(() => super.forwardInput(input) as unknown as import('@tensorflow/tfjs').Tensor2D);
      const values = (await output.data()) as Float32Array;
      const shape = output.shape as [number, number];
      output.dispose();
      this.#ready = { input, values, shape };
      try {
        const result = await super.detectLandmarks(input);
        return Array.isArray(result) ? result : [result];
      } finally {
        this.#ready = null;
      }
    }

    override async detectLandmarks(input: Parameters<InstanceType<FaceApi['FaceLandmark68Net']>['detectLandmarks']>[0]) {
      // The shared engine always passes a list of face tensors.
      if (!Array.isArray(input)) return super.detectLandmarks(input);
      const faces = input as unknown as TfTensorLike[];
      const out = [];
      for (let i = 0; i < faces.length; i += FACES_PER_PASS) out.push(...(await this.#detectBatch(faces.slice(i, i + FACES_PER_PASS))));
      return out;
    }
  }

  return { ...(faceapi as unknown as FaceApiModule), FaceLandmark68Net: LandmarkNet as unknown as new () => FaceLandmarkNetLike };
}

/**
 * The shared engine's options for `descriptor` in the browser: face-api's weights under `faceApiUrl` (absolute,
 * ending in `/`, e.g. `/models/face-api/`), faceres.json and its shard in the folder above it (`/models/`), as
 * the server reads them from public/models. `faceapi.tf` is the worker's tfjs, which has loadGraphModel.
 */
export function embeddingEngineOptions(
  faceapi: FaceApiModule,
  faceApiUrl: string,
  descriptor: DescriptorModelId,
  fetchBytes: (url: string) => Promise<ArrayBuffer>,
): EmbeddingEngineOptions {
  const descriptorBase = new URL('../', faceApiUrl).href;
  return {
    faceapi,
    descriptor,
    readModelFile: (name) => fetchBytes(faceApiUrl + name),
    readDescriptorFile: (name) => fetchBytes(descriptorBase + name),
  };
}
