/**
 * #27 §1 measurement: where a training's time goes once every image's features are reused (a training after
 * deleting one person computes nothing), at N people x 3 faces of synthetic features (LBPH histograms as LBPH makes
 * them: counts over a cell's pixels; random 128-d descriptors). Phases as the service runs them: read and decode the
 * stored features, assemble the models, write training.yml (the text alone, then the whole atomic write), the
 * pickle and embeddings.json, the compact browser segments (from the model in memory, and from training.yml as
 * they were made before), and loading the saved model (a restart). Before #27's model-write change the training
 * waited for the whole training.yml; now it waits for saveSource, and training.yml follows (writeYaml).
 *
 *   npx tsx scripts/model-write-figures.ts 1000
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LBPH_DEFAULTS } from '../shared/lbph/lbph.js';
import { lbphYamlChunks } from '../shared/lbph/yaml/writer.js';
import { encodeLabelMapPickle } from '../shared/lbph/pickle.js';
import { assembleModels, type TrainingSample } from '../shared/recognition/training.js';
import { compactSet } from '../server/audit/kiosk-compact.js';
import { FeatureStore } from '../server/storage/feature-store.js';
import { ModelStore } from '../server/storage/model-store.js';
import { makeSnapshot } from '../server/storage/trained-files.js';

const CELLS = LBPH_DEFAULTS.gridX * LBPH_DEFAULTS.gridY;
const BINS = 256;
const CELL_PIXELS = 144;

function rng(seed: number): () => number {
  let s = (seed * 2654435761 + 1) >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

function histogram(i: number): Float32Array {
  const next = rng(i);
  const h = new Float32Array(CELLS * BINS);
  for (let c = 0; c < CELLS; c++) {
    for (let p = 0; p < CELL_PIXELS; p++) {
      const bin = next() < 0.8 ? Math.floor(next() * 58) * 4 : Math.floor(next() * BINS);
      h[c * BINS + bin] += 1;
    }
    for (let b = 0; b < BINS; b++) h[c * BINS + b] /= CELL_PIXELS;
  }
  return h;
}

function descriptor(i: number): Float32Array {
  const next = rng(i + 1_000_003);
  return Float32Array.from({ length: 128 }, () => next() - 0.5);
}

async function timed<T>(rows: Record<string, string>, what: string, run: () => Promise<T> | T): Promise<T> {
  const t0 = performance.now();
  const out = await run();
  rows[what] = `${((performance.now() - t0) / 1000).toFixed(2)} s`;
  return out;
}

async function measure(people: number): Promise<Record<string, string>> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-model-write-'));
  const rows: Record<string, string> = { faces: String(people * 3) };
  try {
    const features = new FeatureStore(path.join(dir, 'features'));
    const refs = Array.from({ length: people * 3 }, (_, i) => ({
      label: `person-${String(Math.floor(i / 3)).padStart(5, '0')}`,
      filename: `${i}.jpg`,
    }));
    for (const [i, ref] of refs.entries()) {
      await features.write(ref.label, ref.filename, {
        image: 'x',
        detector: 'haar',
        face: { x: 0, y: 0, width: 100, height: 100 },
        crop: 'c',
        histogram: histogram(i),
        descriptorModel: 'm',
        descriptor: descriptor(i),
      });
    }
    const samples = await timed(rows, 'read + decode stored features', async () => {
      const out: TrainingSample[] = [];
      for (const ref of refs) {
        const f = await features.read(ref.label, ref.filename);
        out.push({ label: ref.label, histogram: f!.histogram!, descriptor: f!.descriptor });
      }
      return out;
    });
    const assembled = await timed(rows, 'assemble models', () => assembleModels(samples));
    const store = new ModelStore(path.join(dir, 'models'));
    await store.init();
    await timed(rows, 'training.yml text only (lbphYamlChunks)', () => {
      let n = 0;
      for (const piece of lbphYamlChunks(assembled.lbph)) n += piece.length;
      rows['training.yml bytes'] = `${(n / 1e6).toFixed(1)} MB`;
    });
    // What a training waits for now: training.lbph and the pickle; training.yml is written after its answer.
    const source = await timed(rows, 'saveSource (training.lbph + pickle: the training waits for this)', () =>
      store.saveSource(assembled.lbph, assembled.labelIds),
    );
    const yaml = await timed(rows, 'writeYaml (training.yml, after the answer)', () =>
      store.writeYaml(assembled.lbph, assembled.labelIds, source.source),
    );
    const saved = { yaml, pickle: source.pickle };
    await timed(rows, 'pickle encode', () => encodeLabelMapPickle(assembled.labelIds));
    const embedding = assembled.embedding!;
    const embeddingBytes = await timed(rows, 'saveEmbedding', () =>
      store.saveEmbedding(embedding.model, embedding.labelIds, new Date().toISOString()),
    );
    const files = { lbph: saved.yaml, labelMap: saved.pickle, embedding: embeddingBytes };
    const inMemory = makeSnapshot(files, assembled.labels, [null], { model: assembled.lbph, labelIds: assembled.labelIds });
    await timed(rows, 'compact segments from the model in memory', () => compactSet(inMemory));
    const fromFile = makeSnapshot(files, assembled.labels, [null]);
    await timed(rows, 'compact segments re-reading training.yml', () => compactSet(fromFile));
    await timed(rows, 'loadLbph (restart: reads training.lbph)', () => store.loadLbph());
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
  return rows;
}

const sizes = process.argv.slice(2).map(Number);
for (const people of sizes.length ? sizes : [1000]) console.table(await measure(people));
