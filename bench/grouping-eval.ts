/**
 * How well unknown faces are grouped (#36): pairwise precision (two faces put in one group are one person) and
 * recall (two faces of one person are put in one group), the number of groups, over streams of face views made
 * from the grouping benchmark's faces (grouping-features.ts). Used by grouping.bench.ts and by the regression test
 * (test/recognition/grouping.test.ts) on the committed descriptors. The grouping before #36 (greedy placement
 * against a group's running mean) is kept here to measure it beside.
 */
import { type GroupingOptions, regroupFaces } from '../server/review/grouping.js';
import type { DescriptorModel } from '../shared/recognition/rules.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import type { GroupingFace } from './grouping-features.js';
import { MAYBE_SAME } from './identity-sets.js';

export interface PairScore {
  /** Face views grouped (those with a descriptor). */
  faces: number;
  people: number;
  groups: number;
  /** Pairs in one group that are one person, in one group that are two, and one person's pairs left apart. */
  tp: number;
  fp: number;
  fn: number;
  precision: number;
  recall: number;
  /**
   * Recall per person: the mean, over the people with two faces or more, of the share of their pairs in one group
   * (every person counts once; pairwise recall counts pairs, so a person seen n times weighs n(n-1)/2).
   */
  personRecall: number;
  /** Its sum and count, for pooling. */
  personShares: number;
  peopleTwice: number;
}

/**
 * Thumbnails the identity sets say may show one person twice (identity-sets.ts MAYBE_SAME): a pair of them is
 * neither right nor wrong together, so it is not counted.
 */
const UNSURE = new Set([...MAYBE_SAME].map((key) => `thumb ${key}`));

/** Pairwise figures of a grouping: `group[i]` the group of face `i`, `person[i]` who it is. */
export function pairScore(person: readonly string[], group: readonly string[]): PairScore {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const own = new Map<string, { pairs: number; together: number }>();
  for (let i = 0; i < person.length; i++) {
    for (let j = i + 1; j < person.length; j++) {
      const same = person[i] === person[j];
      if (!same && UNSURE.has(person[i]) && UNSURE.has(person[j])) continue;
      const together = group[i] === group[j];
      if (same && together) tp++;
      else if (together) fp++;
      else if (same) fn++;
      if (same) {
        const o = own.get(person[i]) ?? { pairs: 0, together: 0 };
        o.pairs++;
        if (together) o.together++;
        own.set(person[i], o);
      }
    }
  }
  const personShares = [...own.values()].reduce((s, o) => s + o.together / o.pairs, 0);
  return {
    faces: person.length,
    people: new Set(person).size,
    groups: new Set(group).size,
    tp,
    fp,
    fn,
    precision: tp + fp ? tp / (tp + fp) : 1,
    recall: tp + fn ? tp / (tp + fn) : 1,
    personRecall: own.size ? personShares / own.size : 1,
    personShares,
    peopleTwice: own.size,
  };
}

/** Sums of several scores (held-out halves): figures over all their pairs. */
export function pooled(scores: readonly PairScore[]): PairScore {
  const sum = (k: 'faces' | 'people' | 'groups' | 'tp' | 'fp' | 'fn' | 'personShares' | 'peopleTwice') =>
    scores.reduce((s, x) => s + x[k], 0);
  const tp = sum('tp');
  const fp = sum('fp');
  const fn = sum('fn');
  return {
    faces: sum('faces'),
    people: sum('people'),
    groups: sum('groups'),
    tp,
    fp,
    fn,
    precision: tp + fp ? tp / (tp + fp) : 1,
    recall: tp + fn ? tp / (tp + fn) : 1,
    personRecall: sum('peopleTwice') ? sum('personShares') / sum('peopleTwice') : 1,
    personShares: sum('personShares'),
    peopleTwice: sum('peopleTwice'),
  };
}

/** Streams of face views, as a camera or the API would show them. */
export type Stream = 'clean' | 'camera' | 'all';
export const STREAMS: readonly Stream[] = ['clean', 'camera', 'all'];
export const STREAM_WORDS: Record<Stream, string> = {
  clean: 'every face once, as photographed',
  camera: 'every face in 3 degraded camera views',
  all: 'every face clean and in 3 degraded views',
};

/** The views of a stream (those with a descriptor of `model`), in a seeded order of arrival. */
export function streamOf(faces: readonly GroupingFace[], stream: Stream, model: DescriptorModel, seed: number): GroupingFace[] {
  const wanted = faces.filter((f) => f.descriptors[model] && (stream === 'all' || (stream === 'clean' ? f.view === 0 : f.view > 0)));
  const random = seededRandom(seed);
  const order = wanted.map((f) => ({ f, k: random() }));
  return order.sort((a, b) => a.k - b.k).map((o) => o.f);
}

export type Algorithm = 'linkage' | 'mean';

/** The group of each face of a stream, grouped in the order given. */
export function groupStream(
  faces: readonly GroupingFace[],
  model: DescriptorModel,
  algorithm: Algorithm,
  options: GroupingOptions,
): string[] {
  const items = faces.map((f, i) => ({
    id: `f${String(i).padStart(5, '0')}`,
    seenAt: i,
    descriptor: f.descriptors[model] as Float32Array,
    groupId: null,
    picture: f.picture,
  }));
  const placed = algorithm === 'linkage' ? regroupFaces(items, options) : placeByMean(items, options.max);
  return items.map((i) => placed.get(i.id) as string);
}

/** The people of a list of faces split in two halves by identity (seeded). */
export function halves(faces: readonly GroupingFace[], seed: number): [Set<string>, Set<string>] {
  const people = [...new Set(faces.map((f) => f.person))].sort();
  const random = seededRandom(seed);
  const shuffled = people.map((p) => ({ p, k: random() })).sort((a, b) => a.k - b.k);
  const a = new Set(shuffled.slice(0, shuffled.length >> 1).map((s) => s.p));
  return [a, new Set(people.filter((p) => !a.has(p)))];
}

/** The grouping before #36 (server/review/grouping.ts until then): greedy, against each group's running mean. */
export function placeByMean(items: readonly { id: string; seenAt: number; descriptor: Float32Array }[], max: number): Map<string, string> {
  const clusters: { id: string; sum: Float64Array; mean: Float64Array; count: number }[] = [];
  const placed = new Map<string, string>();
  for (const item of [...items].sort((a, b) => a.seenAt - b.seenAt)) {
    let best: (typeof clusters)[number] | null = null;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const c of clusters) {
      let s = 0;
      for (let i = 0; i < item.descriptor.length; i++) s += (item.descriptor[i] - c.mean[i]) ** 2;
      const d = Math.sqrt(s);
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    if (!best || bestDistance > max) {
      best = {
        id: `g-${item.id}`,
        sum: new Float64Array(item.descriptor.length),
        mean: new Float64Array(item.descriptor.length),
        count: 0,
      };
      clusters.push(best);
    }
    best.count++;
    for (let i = 0; i < item.descriptor.length; i++) {
      best.sum[i] += item.descriptor[i];
      best.mean[i] = best.sum[i] / best.count;
    }
    placed.set(item.id, best.id);
  }
  return placed;
}
