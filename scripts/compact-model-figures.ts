/**
 * Figures for the compact browser model (#27 section 2) at a gallery of PEOPLE x 3 faces (default 1,000): the
 * histograms are lbpHistogram of the OpenCV LBPH fixture crops, jittered (shared/recognition/compact-model-data.ts).
 * Prints training.yml's size, the compact LBPH and 128-d embedding sizes (raw, gzipped per segment), and what the
 * server pays to make the segments from training.yml once per model version (read in pieces, split, gzip sizes).
 * Run: npx tsx scripts/compact-model-figures.ts [people]
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import sharp from 'sharp';
import { memoryFile, makeSnapshot } from '../server/storage/trained-files.js';
import { compactSet } from '../server/audit/kiosk-compact.js';
import { LBPH_DEFAULTS, type LbphModel } from '../shared/lbph/lbph.js';
import { realisticDescriptors, realisticHistograms } from '../shared/recognition/compact-model-data.js';
import { encodeEmbeddingsFile, encodeLbphChunks } from '../shared/recognition/model-files.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

const people = Number(process.argv[2] ?? 1000);
const FIX = path.join(import.meta.dirname, '../test/fixtures/opencv/lbph');
const crops = await Promise.all(
  readdirSync(FIX)
    .filter((f) => f.endsWith('.png'))
    .map(async (f) => {
      const { data, info } = await sharp(path.join(FIX, f)).extractChannel(0).raw().toBuffer({ resolveWithObject: true });
      return { width: info.width, height: info.height, data: new Uint8Array(data) };
    }),
);
const random = seededRandom(2026);
const hs = realisticHistograms(crops, people * 3, random);
const labels = Int32Array.from(hs, (_, i) => Math.floor(i / 3));
const labelIds = Object.fromEntries(Array.from({ length: people }, (_, p) => [`person-${p}`, p]));
const model: LbphModel = { ...LBPH_DEFAULTS, histograms: hs, labels };
const yamlPieces = [...encodeLbphChunks(model, labelIds)].map((s) => Buffer.from(s));
const yaml = Buffer.concat(yamlPieces);
const descriptors = realisticDescriptors(people, 3, 128, random);
const json = encodeEmbeddingsFile({ dim: 128, descriptors, labels }, labelIds, new Date().toISOString());
const snapshot = makeSnapshot({ lbph: memoryFile(yaml), labelMap: null, embedding: Buffer.from(json) }, Object.keys(labelIds), []);

const t0 = performance.now();
const set = await compactSet(snapshot);
const ms = performance.now() - t0;
const raw = (list: { bytes: number }[]) => list.reduce((n, p) => n + p.bytes, 0);
const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
const batch = Buffer.concat([...set.segments.values()].slice(0, 200));
console.log(`${people} people x 3 faces`);
console.log(`training.yml ${mb(yaml.length)} (gzipped ${mb(gzipSync(yaml).length)}); embeddings.json ${mb(json.length)}`);
console.log(
  `compact LBPH ${mb(raw(set.lbph!.people))} raw, ${mb(set.lbph!.wireBytes)} gzipped per segment (batch of 200 gzipped: ${mb(gzipSync(batch).length)})`,
);
console.log(`compact embedding ${mb(raw(set.embedding!.people))} raw, ${mb(set.embedding!.wireBytes)} gzipped`);
console.log(`one person's LBPH segment: ${raw(set.lbph!.people) / people} bytes; server made the set in ${(ms / 1000).toFixed(1)} s`);
