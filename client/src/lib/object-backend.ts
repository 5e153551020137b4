/**
 * The words the Objects page shows for what detects objects in this browser (#29): WASM at once, WebGPU once
 * its session is warm (engine/object-pool.ts).
 */
import type { ObjectBackend } from '../engine/object-pool';

/** "WASM", "WebGPU", "WebGL (tfjs)": the words for a detection runtime (`onnxruntime-web wasm`, `tfjs webgl`…). */
export function runtimeLabel(runtime: string): string {
  const [engine, backend = ''] = runtime.split(' ');
  const name = backend === 'wasm' ? 'WASM' : backend === 'webgpu' ? 'WebGPU' : backend === 'webgl' ? 'WebGL' : backend || engine;
  return engine === 'tfjs' ? `${name} (tfjs)` : name;
}

/** What the Objects page says detects objects now, WebGPU's warm-up included; '' before anything is known. */
export function objectBackendText(b: ObjectBackend | null): string {
  if (!b) return '';
  const now = b.runtime ? runtimeLabel(b.runtime) : null;
  switch (b.gpu) {
    case 'warming':
      return `Detecting on ${now ?? 'WASM'} while WebGPU warms up in the background; it takes over when ready.`;
    case 'warm':
      return `Detecting on WebGPU${b.gpuWarmMs !== undefined ? ` (warmed up in ${(b.gpuWarmMs / 1000).toFixed(1)} s)` : ''}.`;
    case 'failed':
      return `Detecting on ${now ?? 'WASM'}: WebGPU could not be used (${b.gpuReason ?? 'no reason given'}).`;
    default:
      return now ? `Detecting on ${now}.` : '';
  }
}
