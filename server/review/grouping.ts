/**
 * Groups the unknown faces the service saw by likeness, so a reviewer sees "one stranger, seen 10 times" instead of
 * ten rows (issue #36: groups that hold).
 *
 * On the faces themselves, never on a running mean (the mean of unit descriptors shrinks towards the centre, so a
 * growing group attracted ever more strangers: 29 strangers became 11 groups, pairwise precision 0.02). Constrained
 * agglomerative clustering: every face starts alone; the two groups whose nearest faces are nearest merge (single
 * linkage, within `near`), and only while their faces are within `link` of each other on average (average
 * linkage: no chain of look-alikes) and EVERY face of one is within `max` of every face of the other (complete
 * linkage: no two members of a group are further apart than that). Without `near`, groups merge by the average
 * alone. Cannot-links are pairs taken out of the graph, so a group never holds both: two faces of one picture (two
 * people), and pairs a reviewer separated.
 *
 * The whole window is clustered again whenever faces arrive (or the limits change), so a group may be revised as
 * faces come; its id stays with its members: each new group takes the previous id most of its faces had (each
 * previous id goes to the group holding most of its faces), and a group with none is named after its oldest face.
 * A face without a descriptor keeps its group, or is a group of its own. Descriptors of another length (another
 * descriptor model) are never compared.
 */

export interface GroupingItem {
  id: string;
  /** The time seen (ms since the epoch): ties between merges and new ids go to the oldest faces. */
  seenAt: number;
  descriptor: Float32Array | null;
  /** The group the face was in (kept where its members agree), or null for a new face. */
  groupId: string | null;
  /** The picture the face was seen in: two faces of one picture are two people. Null: a picture of its own. */
  picture?: string | null;
}

export interface GroupingOptions {
  /** Complete linkage: the largest euclidean distance between any two faces of one group. */
  max: number;
  /** Average linkage: two groups merge while the mean distance between their faces is within this (<= max). */
  link: number;
  /** Pairs of face ids that are two people (a reviewer separated them). */
  apart?: readonly (readonly [string, string])[];
  /** Single linkage: groups merge while their nearest faces are within this (and `max` holds); default: off. */
  near?: number;
}

/**
 * The limits as shares of the recognition limit of the descriptor in use (the embedding rule's `max`), measured out
 * of sample by bench/grouping.bench.ts (bench/RESULTS.md): a group's nearest faces within 0.85 of it (fitted on half
 * the people), its faces within the limit itself on average (set a priori: people seen two to four times cannot
 * tell a bound of 1 from 1.1, and a tighter one splits a person seen many times on a camera), and no two faces of
 * a group more than 1.3 times the limit apart (a camera's views of one person spread wider than two photos; under
 * the average bound, no cap from 1.3 up, nor none, changes a group there).
 */
export const MAX_SHARE = 1.3;
export const LINK_SHARE = 1;
export const NEAR_SHARE = 0.85;

/** The grouping options for a recognition limit. */
export function groupingOptions(limit: number): GroupingOptions {
  return { max: limit * MAX_SHARE, link: limit * LINK_SHARE, near: limit * NEAR_SHARE };
}

/** The id a new group gets from its oldest face. */
export function groupIdFor(firstSightingId: string): string {
  return `g-${firstSightingId}`;
}

export function descriptorDistance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i] - b[i];
    sum += d * d;
  }
  return Math.sqrt(sum);
}

const byAge = (a: GroupingItem, b: GroupingItem) => a.seenAt - b.seenAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A binary min-heap of candidate merges, ordered by mean distance, then by the older clusters. */
class MergeHeap {
  private readonly items: [number, number, number, number, number][] = [];
  get size(): number {
    return this.items.length;
  }
  private less(i: number, j: number): boolean {
    const a = this.items[i];
    const b = this.items[j];
    return a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])));
  }
  push(entry: [mean: number, a: number, b: number, versionA: number, versionB: number]): void {
    const items = this.items;
    items.push(entry);
    let i = items.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      [items[i], items[p]] = [items[p], items[i]];
      i = p;
    }
  }
  pop(): [number, number, number, number, number] | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top;
  }
}

/** Pairs of faces with their distance, in growing typed arrays. */
class PairList {
  i = new Int32Array(1024);
  j = new Int32Array(1024);
  d = new Float64Array(1024);
  size = 0;
  push(i: number, j: number, d: number): void {
    if (this.size === this.i.length) {
      const grow = <T extends Int32Array | Float64Array>(from: T, to: T): T => {
        to.set(from);
        return to;
      };
      this.i = grow(this.i, new Int32Array(this.size * 2));
      this.j = grow(this.j, new Int32Array(this.size * 2));
      this.d = grow(this.d, new Float64Array(this.size * 2));
    }
    this.i[this.size] = i;
    this.j[this.size] = j;
    this.d[this.size] = d;
    this.size++;
  }
}

class UnionFind {
  private readonly parent: Int32Array;
  constructor(n: number) {
    this.parent = Int32Array.from({ length: n }, (_, i) => i);
  }
  find(x: number): number {
    let root = x;
    while (this.parent[root] !== root) root = this.parent[root];
    while (this.parent[x] !== root) {
      const next = this.parent[x];
      this.parent[x] = root;
      x = next;
    }
    return root;
  }
  union(a: number, b: number): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent[Math.max(ra, rb)] = Math.min(ra, rb);
  }
}

/**
 * Constrained average-linkage clustering of faces of one descriptor length (given oldest first): the clusters, as
 * lists of indexes into `faces`, each oldest first.
 */
export function clusterDescriptors(
  faces: readonly { descriptor: Float32Array; picture?: string | null; id?: string }[],
  options: GroupingOptions,
): number[][] {
  const n = faces.length;
  const apart = new Set<string>();
  if (options.apart?.length) {
    const index = new Map(faces.map((f, i) => [f.id, i]));
    for (const [a, b] of options.apart) {
      const i = index.get(a);
      const j = index.get(b);
      if (i !== undefined && j !== undefined) apart.add(i < j ? `${i},${j}` : `${j},${i}`);
    }
  }
  // The graph of pairs that may share a group: within `max`, not of one picture, not separated. Between two
  // clusters: the sum of their pairs' distances, kept only while every pair is an edge.
  const neighbours: Map<number, [number, number]>[] = Array.from({ length: n }, () => new Map());
  const near = options.near;
  const ok = (mean: number, min: number) => mean <= options.link && (near === undefined || min <= near);
  const key = (mean: number, min: number) => (near !== undefined ? min : mean);
  const heap = new MergeHeap();
  const pairs = new PairList();
  for (let i = 0; i < n; i++) {
    const a = faces[i];
    for (let j = i + 1; j < n; j++) {
      const b = faces[j];
      const d = descriptorDistance(a.descriptor, b.descriptor);
      if (d > options.max) continue;
      if (a.picture != null && a.picture === b.picture) continue;
      if (apart.size && apart.has(`${i},${j}`)) continue;
      pairs.push(i, j, d);
    }
  }
  // Two groups merge only through a pair within `near` (or, without it, within `max`), so faces never joined by a
  // chain of such pairs never share a group: pairs between them are left out of the graph (the same groups, and in
  // a crowd most pairs within `max` are of two such people, which made the graph, not the distances, the cost).
  const joined = new UnionFind(n);
  const chain = near ?? options.max;
  for (let k = 0; k < pairs.size; k++) if (pairs.d[k] <= chain) joined.union(pairs.i[k], pairs.j[k]);
  for (let k = 0; k < pairs.size; k++) {
    const i = pairs.i[k];
    const j = pairs.j[k];
    if (joined.find(i) !== joined.find(j)) continue;
    const d = pairs.d[k];
    neighbours[i].set(j, [d, d]);
    neighbours[j].set(i, [d, d]);
    if (ok(d, d)) heap.push([d, i, j, 0, 0]);
  }
  const members: (number[] | null)[] = Array.from({ length: n }, (_, i) => [i]);
  const version = new Int32Array(n);
  while (heap.size) {
    const [, a, b, va, vb] = heap.pop() as [number, number, number, number, number];
    if (version[a] !== va || version[b] !== vb || !members[a] || !members[b]) continue;
    // b joins a (the older one: a < b in every entry pushed).
    const ma = members[a] as number[];
    const mb = members[b] as number[];
    const na = neighbours[a];
    const nb = neighbours[b];
    const merged = new Map<number, [number, number]>();
    for (const [c, ea] of na) {
      if (c === b) continue;
      const eb = nb.get(c);
      // A pair missing on either side: some face of c is beyond `max` of the merged group, for good.
      if (eb !== undefined) merged.set(c, [ea[0] + eb[0], Math.min(ea[1], eb[1])]);
      neighbours[c].delete(a);
    }
    for (const c of nb.keys()) neighbours[c].delete(b);
    members[a] = [...ma, ...mb].sort((x, y) => x - y);
    members[b] = null;
    neighbours[b] = new Map();
    neighbours[a] = merged;
    version[a]++;
    version[b]++;
    const size = (members[a] as number[]).length;
    for (const [c, entry] of merged) {
      neighbours[c].set(a, entry);
      const mean = entry[0] / (size * (members[c] as number[]).length);
      if (ok(mean, entry[1])) {
        const k = key(mean, entry[1]);
        heap.push(a < c ? [k, a, c, version[a], version[c]] : [k, c, a, version[c], version[a]]);
      }
    }
  }
  return members.filter((m): m is number[] => m !== null);
}

/**
 * The group of every face after clustering them again: a map from face id to group id for each face whose group
 * is new or changed (faces that stay where they were are not in it).
 */
export function regroupFaces(items: readonly GroupingItem[], options: GroupingOptions): Map<string, string> {
  const sorted = [...items].sort(byAge);
  const age = new Map(sorted.map((item, i) => [item, i]));
  const clusters: GroupingItem[][] = [];
  const byLength = new Map<number, GroupingItem[]>();
  for (const item of sorted) {
    if (!item.descriptor) {
      clusters.push([item]);
      continue;
    }
    const list = byLength.get(item.descriptor.length) ?? [];
    list.push(item);
    byLength.set(item.descriptor.length, list);
  }
  for (const list of byLength.values()) {
    const found = clusterDescriptors(
      list.map((i) => ({ id: i.id, descriptor: i.descriptor as Float32Array, picture: i.picture })),
      options,
    );
    for (const c of found) clusters.push(c.map((k) => list[k]));
  }
  // Stable ids: each previous id to the cluster holding most of its faces (ties: the cluster with the older face).
  const votes: { cluster: number; id: string; count: number; oldest: number }[] = [];
  clusters.forEach((members, cluster) => {
    const counts = new Map<string, number>();
    for (const m of members) if (m.groupId) counts.set(m.groupId, (counts.get(m.groupId) ?? 0) + 1);
    for (const [id, count] of counts) votes.push({ cluster, id, count, oldest: age.get(members[0]) as number });
  });
  votes.sort((a, b) => b.count - a.count || a.oldest - b.oldest || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const idOf = new Map<number, string>();
  const taken = new Set<string>();
  for (const v of votes) {
    if (idOf.has(v.cluster) || taken.has(v.id)) continue;
    idOf.set(v.cluster, v.id);
    taken.add(v.id);
  }
  // Previous ids not kept are not reused for another cluster either (their faces' reviewers knew them as that group).
  const reserved = new Set(items.flatMap((i) => (i.groupId ? [i.groupId] : [])));
  const changed = new Map<string, string>();
  clusters.forEach((members, cluster) => {
    let id = idOf.get(cluster);
    if (!id) {
      id = members.map((m) => groupIdFor(m.id)).find((g) => !reserved.has(g) && !taken.has(g)) ?? groupIdFor(`${members[0].id}-${cluster}`);
      taken.add(id);
    }
    for (const m of members) if (m.groupId !== id) changed.set(m.id, id);
  });
  return changed;
}

export interface Coherence {
  coherent: boolean;
  /** Why not, in words; null when coherent. */
  reason: string | null;
  /** The largest distance between two of its faces (null: fewer than two faces with descriptors). */
  maxDistance: number | null;
  /** The mean distance between its faces. */
  meanDistance: number | null;
}

/**
 * Whether a group's faces agree with each other: every pair within `max` (the recognition limit) and the mean
 * within `link`. A group the clustering made now always does; one made before (by the old grouping, or under a
 * higher limit) may not, and is then never assigned whole.
 */
export function groupCoherence(descriptors: readonly Float32Array[], options: GroupingOptions): Coherence {
  let max = 0;
  let sum = 0;
  let pairs = 0;
  let worst: [number, number] = [0, 0];
  for (let i = 0; i < descriptors.length; i++) {
    for (let j = i + 1; j < descriptors.length; j++) {
      if (descriptors[i].length !== descriptors[j].length) continue;
      const d = descriptorDistance(descriptors[i], descriptors[j]);
      sum += d;
      pairs++;
      if (d > max) {
        max = d;
        worst = [i, j];
      }
    }
  }
  if (pairs === 0) return { coherent: true, reason: null, maxDistance: null, meanDistance: null };
  const mean = sum / pairs;
  const round = (v: number) => Math.round(v * 1000) / 1000;
  let reason: string | null = null;
  if (max > options.max) {
    reason = `two of its faces (${worst[0] + 1} and ${worst[1] + 1}) are ${round(max)} apart, beyond the recognition limit ${round(options.max)}: they may be two people`;
  } else if (mean > options.link) {
    reason = `its faces are ${round(mean)} apart on average, beyond ${round(options.link)}: it may hold more than one person`;
  }
  return { coherent: reason === null, reason, maxDistance: round(max), meanDistance: round(mean) };
}
