import { describe, expect, it } from 'vitest';
import { objectBackendText, runtimeLabel } from './object-backend';

describe('what the Objects page says detects objects', () => {
  it('names each runtime', () => {
    expect(runtimeLabel('onnxruntime-web wasm')).toBe('WASM');
    expect(runtimeLabel('onnxruntime-web webgpu')).toBe('WebGPU');
    expect(runtimeLabel('tfjs webgl')).toBe('WebGL (tfjs)');
  });

  it('says WASM runs while WebGPU warms up, then WebGPU, or why not', () => {
    expect(objectBackendText(null)).toBe('');
    expect(objectBackendText({ runtime: null, gpu: 'off' })).toBe('');
    expect(objectBackendText({ runtime: 'onnxruntime-web wasm', gpu: 'off' })).toBe('Detecting on WASM.');
    expect(objectBackendText({ runtime: 'onnxruntime-web wasm', gpu: 'warming' })).toBe(
      'Detecting on WASM while WebGPU warms up in the background; it takes over when ready.',
    );
    expect(objectBackendText({ runtime: 'onnxruntime-web webgpu', gpu: 'warm', gpuWarmMs: 29_700 })).toBe(
      'Detecting on WebGPU (warmed up in 29.7 s).',
    );
    expect(objectBackendText({ runtime: 'onnxruntime-web wasm', gpu: 'failed', gpuReason: 'device lost' })).toBe(
      'Detecting on WASM: WebGPU could not be used (device lost).',
    );
  });
});
