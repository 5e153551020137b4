/**
 * The features of the open-set benchmark's faces (#34): every face clean (as enrolled) and in several degraded
 * views (camera-degrade.ts), each view with what the product computes for a query face: its quality measures
 * (shared/recognition/photo-check.ts `measureFace`, with the eye cascade's candidates), the LBPH histogram of the
 * eye-aligned crop, and the embedding descriptors of both descriptor models. Computed once per run, then every
 * protocol and rule is evaluated on them without running a model again.
 */
import path from 'node:path';
import { NodeEmbeddingEngine } from '../server/engines/faces/embedding-node.js';
import { rankEmbedding, trainEmbedding } from '../shared/embedding/matcher.js';
import type { Rect } from '../shared/image/types.js';
import { LBPH_DEFAULTS, type LbphModel, lbpHistogram, rankLbph } from '../shared/lbph/lbph.js';
import { measureFace, type PhotoMeasures } from '../shared/recognition/photo-check.js';
import type { PersonDistance } from '../shared/recognition/ranking.js';
import type { DescriptorModel } from '../shared/recognition/rules.js';
import { alignedFace, eyeCandidates, FACE_ALIGNMENT } from '../shared/vision/eye-alignment.js';
import type { HaarCascade } from '../shared/vision/haar-cascade.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { CLEAN, type Degradation, degradeFace, describeDegradation, drawDegradation, type Photo } from './camera-degrade.js';
import type { ViewDistances } from './open-set-protocol.js';
import { median } from './types.js';

export interface SourceFace {
  person: string;
  source: string;
  photo: Photo;
  box: Rect;
  strangerOnly?: boolean;
}

export interface FaceView {
  /** Index of the face in the input list. */
  face: number;
  /** 0: the clean face; 1..: degraded views. */
  view: number;
  degradation: string;
  measures: PhotoMeasures;
  lbph: Float32Array;
  /** Per descriptor model; null where the nets found no face to describe. */
  descriptors: Partial<Record<DescriptorModel, Float32Array | null>>;
}

export interface ViewSet {
  views: FaceView[];
  /** Median time per view of each recognizer's feature (ms). */
  msPerFace: Record<string, number>;
  /** Descriptor models that could not load, with why. */
  unavailable: Record<string, string>;
}

/** Degraded views per face in the benchmark and its regression fixture (view 0 is the clean face), and their seed. */
export const DEFAULT_VIEWS = 3;
export const VIEW_SEED = 34;

/** The degradations of face `i` (seeded by the face's index and the run's seed): view 0 clean, then `views` drawn. */
export function degradationsOf(i: number, views: number, seed: number): Degradation[] {
  const random = seededRandom(seed * 1_000_003 + i * 7919 + 1);
  return [CLEAN, ...Array.from({ length: views }, () => drawDegradation(random))];
}

export async function computeViews(
  repoRoot: string,
  faces: readonly SourceFace[],
  eyeCascade: HaarCascade,
  options: { views: number; seed: number; descriptors: readonly DescriptorModel[]; log?: (line: string) => void },
): Promise<ViewSet> {
  const pictures: { face: number; view: number; degradation: string; photo: Photo; box: Rect }[] = [];
  for (let i = 0; i < faces.length; i++) {
    const f = faces[i];
    const list = degradationsOf(i, options.views, options.seed);
    for (let v = 0; v < list.length; v++) {
      const d = list[v];
      const seen = v === 0 ? { photo: f.photo, box: f.box } : await degradeFace(f.photo, f.box, d);
      pictures.push({ face: i, view: v, degradation: describeDegradation(d), ...seen });
    }
  }
  options.log?.(`open-set: ${faces.length} faces, ${pictures.length} views (clean + ${options.views} degraded each)`);
  const lbphTimes: number[] = [];
  const views: FaceView[] = pictures.map((p) => {
    const eyes = eyeCandidates(eyeCascade, p.photo.gray, p.box);
    const t0 = performance.now();
    const lbph = lbpHistogram(alignedFace(p.photo.gray, p.box, eyeCascade));
    lbphTimes.push(performance.now() - t0);
    return {
      face: p.face,
      view: p.view,
      degradation: p.degradation,
      measures: measureFace(p.photo.gray, p.box, eyes),
      lbph,
      descriptors: {},
    };
  });
  const msPerFace: Record<string, number> = { lbph: median(lbphTimes) };
  const unavailable: Record<string, string> = {};
  for (const descriptor of options.descriptors) {
    const engine = new NodeEmbeddingEngine({ modelDir: path.join(repoRoot, 'public/models/face-api'), descriptor });
    const status = await engine.load();
    if (!status.available) {
      unavailable[descriptor] = status.reason ?? 'not loaded';
      continue;
    }
    try {
      for (const p of pictures.slice(0, 3)) await engine.describeFaces(p.photo.rgb, [p.box]);
      const times: number[] = [];
      for (let k = 0; k < pictures.length; k++) {
        const t0 = performance.now();
        const [d] = await engine.describeFaces(pictures[k].photo.rgb, [pictures[k].box]);
        times.push(performance.now() - t0);
        views[k].descriptors[descriptor] = d ?? null;
      }
      msPerFace[descriptor] = median(times);
      options.log?.(`open-set: ${descriptor} described ${pictures.length} views, ${msPerFace[descriptor].toFixed(0)} ms each`);
    } finally {
      engine.dispose();
    }
  }
  return { views, msPerFace, unavailable };
}

/**
 * Distances from every view to every clean face (view 0) under one recognizer, by the product's rankings: LBPH's
 * chi-square (rankLbph) and the embedding matcher's euclidean distance (rankEmbedding), every clean face enrolled
 * as a person of its own. Infinity where a side has no feature (the nets found no face to describe).
 */
export function viewDistances(set: ViewSet, faces: number, views: number, recognizer: 'lbph' | DescriptorModel): ViewDistances {
  const d = new Float64Array(faces * views * faces).fill(Infinity);
  const clean = set.views.filter((v) => v.view === 0);
  let rank: (v: FaceView) => PersonDistance[];
  if (recognizer === 'lbph') {
    const model: LbphModel = {
      ...LBPH_DEFAULTS,
      histograms: clean.map((v) => v.lbph),
      labels: Int32Array.from(clean.map((v) => v.face)),
      faceAlignment: FACE_ALIGNMENT,
    };
    rank = (v) => rankLbph(model, v.lbph, Number.MAX_SAFE_INTEGER);
  } else {
    const withFeature = clean.filter((v) => v.descriptors[recognizer]);
    if (!withFeature.length) return { faces, views, d };
    const model = trainEmbedding(
      withFeature.map((v) => ({ label: v.face, descriptor: v.descriptors[recognizer]! })),
      withFeature[0].descriptors[recognizer]!.length,
    );
    rank = (v) => (v.descriptors[recognizer] ? rankEmbedding(model, v.descriptors[recognizer]!, Number.MAX_SAFE_INTEGER) : []);
  }
  for (const v of set.views) {
    const row = (v.face * views + v.view) * faces;
    for (const p of rank(v)) d[row + p.labelId] = p.distance;
  }
  return { faces, views, d };
}
