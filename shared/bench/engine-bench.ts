/**
 * What the in-browser engine bench page (client/bench.html) writes to `window.__benchResult`: read by the page
 * itself, the e2e tests and `npm run bench`, so all three agree on one shape.
 */
import type { RecognitionModel } from '../api/index.js';

export type EngineBenchMode = RecognitionModel | 'objects';

export interface EngineBenchResult {
  backend: string;
  requested_backend: string;
  backend_attempts: { backend: string; ok: boolean; reason?: string }[];
  cross_origin_isolated: boolean;
  wasm?: { simd: boolean; threads: boolean; threadsCount: number };
  mode: EngineBenchMode;
  /** Threads sharing each cascade run, and how each scans windows (WebAssembly SIMD, WebAssembly, JavaScript). */
  cascade_threads: number;
  cascade_scan: 'simd' | 'wasm' | 'js';
  seconds: number;
  width: number;
  height: number;
  frames: number;
  fps: number;
  /** Page round trip per frame (grab + worker + reply). */
  ms_per_frame_median: number;
  ms_per_frame_p90: number;
  /** Time inside the worker, by step (medians). */
  worker_ms_median: Record<string, number>;
  /** Faces (or objects) in the last frame, and every label (class) seen during the run. */
  faces: number;
  labels: string[];
  init_ms: number;
  /** Objects: frames in flight, and the object lanes detecting them at the end (0: the engine worker alone). */
  depth?: number;
  object_lanes?: number;
}
