import type { InferenceSession } from 'onnxruntime-web';

/**
 * onnxruntime-web's WebGPU session options for NanoDet (#29). Session creation took 29.7 s on an H100 through
 * Dawn (WASM: 0.27 s) for a 7 MB graph, so the weights are unlikely to be the cost; the likely one is compiling
 * a compute pipeline (WGSL to the driver's code) per kernel, back to back, before the first answer. Not measured
 * here (no GPU was lent to this task); chosen from the provider's documentation:
 * - graph optimisation `all`: Conv + LeakyRelu (the folded pads and biases too) fuse into one kernel, so fewer
 *   pipelines are compiled than with `basic` or `disabled`;
 * - NCHW, the graph's own layout (the provider's default, pinned): with NHWC onnxruntime inserts layout
 *   Transposes where the graph's layout meets the kernels', each one more shader to compile;
 * - `wgpuOnly` validation: the provider's own checks (`basic`, the default) off, WebGPU's own kept (in a browser
 *   `disabled` means the same).
 * scripts/device/webgpu-session.ts measures creation and first-run time for each option on a GPU machine.
 */
export const WEBGPU_SESSION_OPTIONS = {
  executionProviders: [{ name: 'webgpu', preferredLayout: 'NCHW', validationMode: 'wgpuOnly' }],
  graphOptimizationLevel: 'all',
} as const satisfies InferenceSession.SessionOptions;
