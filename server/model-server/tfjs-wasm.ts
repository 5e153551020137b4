/**
 * TensorFlow.js on its WASM backend in Node (tfjs-node cannot be installed here). The .wasm binaries are read
 * from the installed package, never fetched. Idempotent: every caller in the process shares one backend.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';

let ready: Promise<typeof tf> | null = null;

export function tfjsWasm(): Promise<typeof tf> {
  ready ??= (async () => {
    if (tf.getBackend() !== 'wasm') {
      // The package's Node entry lives in dist/, beside the .wasm files.
      const dist = path.dirname(createRequire(import.meta.url).resolve('@tensorflow/tfjs-backend-wasm'));
      setWasmPaths(dist + path.sep);
      if (!(await tf.setBackend('wasm'))) throw new Error('the TensorFlow.js WASM backend failed to initialise');
    }
    await tf.ready();
    return tf;
  })().catch((err: unknown) => {
    ready = null;
    throw err;
  });
  return ready;
}
