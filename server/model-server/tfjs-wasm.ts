/**
 * TensorFlow.js on its WASM backend in Node (tfjs-node cannot be installed here). The .wasm binaries are read
 * from the installed package, never fetched. Idempotent: every caller in the process shares one backend.
 */
import fs from 'node:fs/promises';
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

interface ModelJson {
  modelTopology: unknown;
  weightsManifest: { paths: string[]; weights: tf.io.WeightsManifestEntry[] }[];
  format?: string;
  generatedBy?: string;
  convertedBy?: string | null;
  signature?: unknown;
}

/** A tfjs graph model (model.json and its weight files) from disk, on the WASM backend: tf.loadGraphModel only fetches URLs. */
export async function loadGraphModelFile(file: string): Promise<tf.GraphModel> {
  const backend = await tfjsWasm();
  const json = JSON.parse(await fs.readFile(file, 'utf8')) as ModelJson;
  const parts: Buffer[] = [];
  for (const group of json.weightsManifest) for (const p of group.paths) parts.push(await fs.readFile(path.join(path.dirname(file), p)));
  const all = Buffer.concat(parts);
  const artifacts: tf.io.ModelArtifacts = {
    modelTopology: json.modelTopology as tf.io.ModelArtifacts['modelTopology'],
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer,
    format: json.format,
    generatedBy: json.generatedBy,
    convertedBy: json.convertedBy ?? undefined,
    signature: json.signature as object | undefined,
  };
  return backend.loadGraphModel({ load: async () => artifacts });
}
