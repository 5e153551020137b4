import { describe, expect, it } from 'vitest';
import { placeByMean } from '../../bench/grouping-eval.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import {
  clusterDescriptors,
  descriptorDistance,
  groupCoherence,
  type GroupingItem,
  groupIdFor,
  groupingOptions,
  regroupFaces,
} from './grouping.js';

const LIMIT = 0.515; // faceapi-128's calibrated recognition limit
const OPTIONS = groupingOptions(LIMIT);
const random = seededRandom(26);

/** A face-api-like descriptor: 128 values of about unit length in all. */
function person(): Float32Array {
  return Float32Array.from({ length: 128 }, () => (random() - 0.5) * 0.3);
}

/** The same person seen again: each value moved a little (about 0.15 in euclidean distance overall). */
function seenAgain(base: Float32Array): Float32Array {
  return base.map((v) => v + (random() - 0.5) * 0.045);
}

let next = 0;
function face(descriptor: Float32Array | null, at: number, groupId: string | null = null, picture: string | null = null): GroupingItem {
  return { id: `s${String(next++).padStart(4, '0')}`, seenAt: at, descriptor, groupId, picture };
}

/** Every face's group: its new one, or the one it kept. */
function groupOf(items: readonly GroupingItem[], changed: Map<string, string>): Map<string, string> {
  return new Map(items.map((i) => [i.id, changed.get(i.id) ?? (i.groupId as string)]));
}

/** Group id -> member ids, largest first. */
function groupsOf(items: readonly GroupingItem[], changed: Map<string, string>): string[][] {
  const groups = new Map<string, string[]>();
  for (const [id, g] of groupOf(items, changed)) groups.set(g, [...(groups.get(g) ?? []), id]);
  return [...groups.values()].sort((a, b) => b.length - a.length);
}

/** The faces with the groups a pass gave them, as the database keeps them for the next pass. */
const stored = (items: readonly GroupingItem[], changed: Map<string, string>): GroupingItem[] =>
  items.map((i) => ({ ...i, groupId: changed.get(i.id) ?? i.groupId }));

describe('grouping unknown faces by likeness', () => {
  it('puts one stranger seen ten times in one group, apart from two others, named after its oldest face', () => {
    const stranger = person();
    const other = person();
    const third = person();
    // The synthetic people are far apart, and one person's faces near each other, as real descriptors are.
    expect(descriptorDistance(stranger, other)).toBeGreaterThan(1);
    expect(descriptorDistance(stranger, seenAgain(stranger))).toBeLessThan(LIMIT / 2);

    const items: GroupingItem[] = [];
    for (let i = 0; i < 10; i++) items.push(face(seenAgain(stranger), 1000 + i * 10));
    items.push(face(seenAgain(other), 1005), face(seenAgain(other), 1015), face(seenAgain(third), 1020));
    const changed = regroupFaces(items, OPTIONS);

    expect(changed.size).toBe(13);
    const groups = groupsOf(items, changed);
    expect(groups.map((g) => g.length)).toEqual([10, 2, 1]);
    expect(groups[0]).toEqual(items.slice(0, 10).map((i) => i.id));
    expect(changed.get(items[3].id)).toBe(groupIdFor(items[0].id));
  });

  it('does not let a group drift: strangers around one person, each within the limit of the mean, stay apart', () => {
    // Person A's ten faces sit at `centre`; ten strangers each 0.5 from it in directions of their own, so 0.71 from
    // each other. The running mean of the group stays near the centre, within the limit (0.515) of every stranger:
    // the old grouping put all of them under A. On the faces themselves no two strangers are one person, and none
    // is near enough to A's faces on average.
    const centre = person();
    const direction = (k: number) => Float32Array.from({ length: 128 }, (_, i) => (i === k ? 0.5 : 0));
    const items: GroupingItem[] = [];
    for (let i = 0; i < 10; i++)
      items.push(
        face(
          centre.map((v, j) => v + (j === 100 + i ? 0.01 : 0)),
          i,
        ),
      );
    for (let k = 0; k < 10; k++)
      items.push(
        face(
          centre.map((v, j) => v + direction(k)[j]),
          10 + k,
        ),
      );
    const strangers = items.slice(10);
    expect(descriptorDistance(strangers[0].descriptor!, strangers[1].descriptor!)).toBeCloseTo(Math.SQRT1_2, 2);

    const old = placeByMean(
      items.map((i) => ({ id: i.id, seenAt: i.seenAt, descriptor: i.descriptor! })),
      LIMIT,
    );
    expect(new Set(old.values()).size).toBe(1);

    const groups = groupsOf(items, regroupFaces(items, OPTIONS));
    expect(groups.map((g) => g.length)).toEqual([10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(groups[0]).toEqual(items.slice(0, 10).map((i) => i.id));
  });

  it('never puts two faces of one picture in one group, however alike', () => {
    const twin = person();
    const items = [face(twin, 1, null, 'photo-1'), face(seenAgain(twin), 1, null, 'photo-1'), face(seenAgain(twin), 2, null, 'photo-2')];
    const groups = groupsOf(items, regroupFaces(items, OPTIONS));
    expect(groups).toHaveLength(2);
    for (const g of groups) expect(g.filter((id) => id === items[0].id || id === items[1].id).length).toBeLessThanOrEqual(1);
  });

  it('keeps apart the faces a reviewer separated', () => {
    const stranger = person();
    const items = [face(seenAgain(stranger), 1), face(seenAgain(stranger), 2), face(seenAgain(stranger), 3)];
    expect(groupsOf(items, regroupFaces(items, OPTIONS))).toHaveLength(1);
    const apart = groupsOf(items, regroupFaces(items, { ...OPTIONS, apart: [[items[0].id, items[2].id]] }));
    expect(apart).toHaveLength(2);
    expect(apart.some((g) => g.includes(items[0].id) && g.includes(items[2].id))).toBe(false);
  });

  it('keeps group ids with their members as faces arrive, and a split-off part gets an id of its own', () => {
    const a = person();
    const b = person();
    const first = [face(seenAgain(a), 1), face(seenAgain(a), 2), face(seenAgain(a), 3)];
    const pass1 = stored(first, regroupFaces(first, OPTIONS));
    const id = groupIdFor(first[0].id);
    expect(pass1.every((f) => f.groupId === id)).toBe(true);

    // New faces: A again (joins A's group, keeping its id) and B twice (a new group named after its oldest face).
    const arrivals = [face(seenAgain(b), 4), face(seenAgain(a), 5), face(seenAgain(b), 6)];
    const changed = regroupFaces([...pass1, ...arrivals], OPTIONS);
    expect([...changed.keys()].sort()).toEqual(arrivals.map((f) => f.id).sort());
    expect(changed.get(arrivals[1].id)).toBe(id);
    expect(changed.get(arrivals[0].id)).toBe(groupIdFor(arrivals[0].id));
    expect(changed.get(arrivals[2].id)).toBe(groupIdFor(arrivals[0].id));

    // A group made before (one id over A's and B's faces, as the running mean did): the majority keeps the id, the
    // rest gets a new one, named after its oldest face (never the old id again).
    const mixed = [...first, face(seenAgain(b), 7), face(seenAgain(b), 8)].map((f) => ({ ...f, groupId: 'g-old' }));
    const split = groupOf(mixed, regroupFaces(mixed, OPTIONS));
    expect(mixed.slice(0, 3).map((f) => split.get(f.id))).toEqual(['g-old', 'g-old', 'g-old']);
    expect(mixed.slice(3).map((f) => split.get(f.id))).toEqual([groupIdFor(mixed[3].id), groupIdFor(mixed[3].id)]);
  });

  it('gives the same groups whatever order the faces come in', () => {
    const a = person();
    const b = person();
    const items = [0, 1, 2, 3, 4, 5].map((i) => face(seenAgain(i % 2 ? a : b), 100 + i));
    const one = regroupFaces(items, OPTIONS);
    const other = regroupFaces([...items].reverse(), OPTIONS);
    expect(other).toEqual(one);
    expect(new Set(one.values()).size).toBe(2);
  });

  it('makes a face without a descriptor a group of its own, and never compares descriptors of another length', () => {
    const stranger = person();
    const items = [
      face(null, 1),
      face(null, 2),
      face(seenAgain(stranger), 3),
      // Another descriptor model's vector (longer): never in a 128-value group.
      face(
        Float32Array.from({ length: 256 }, (_, i) => (i < 128 ? stranger[i] : 0)),
        4,
      ),
    ];
    const placed = regroupFaces(items, OPTIONS);
    expect(new Set(placed.values()).size).toBe(4);
    expect(placed.get(items[0].id)).toBe(groupIdFor(items[0].id));
  });

  it('links on the average: a chain of faces each near the next is not one group', () => {
    // Single linkage would chain these; the mean distance between the ends' groups is past the limit.
    const start = person();
    const step = Float32Array.from({ length: 128 }, (_, i) => (i === 7 ? 0.3 : 0));
    const chain = Array.from({ length: 6 }, (_, k) => start.map((v, i) => v + step[i] * k));
    const clusters = clusterDescriptors(
      chain.map((descriptor) => ({ descriptor })),
      OPTIONS,
    );
    expect(clusters.length).toBeGreaterThan(1);
    for (const c of clusters) {
      for (const i of c) for (const j of c) expect(descriptorDistance(chain[i], chain[j])).toBeLessThanOrEqual(OPTIONS.max);
    }
  });

  it('tells a group whose faces do not agree, and why', () => {
    const a = person();
    const b = person();
    expect(groupCoherence([seenAgain(a), seenAgain(a), seenAgain(a)], OPTIONS)).toMatchObject({ coherent: true, reason: null });
    const mixed = groupCoherence([seenAgain(a), seenAgain(a), seenAgain(b)], OPTIONS);
    expect(mixed.coherent).toBe(false);
    expect(mixed.reason).toMatch(/beyond the recognition limit/);
    expect(mixed.maxDistance).toBeGreaterThan(OPTIONS.max);
    expect(groupCoherence([seenAgain(a)], OPTIONS)).toMatchObject({ coherent: true, maxDistance: null });
  });
});
