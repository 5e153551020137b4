import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { type GroupingItem, groupIdFor, placeInGroups } from './grouping.js';

const MAX = 0.48; // faceapi-128's calibrated limit
const random = seededRandom(26);

/** A face-api-like descriptor: 128 values of about unit length in all. */
function person(): Float32Array {
  return Float32Array.from({ length: 128 }, () => (random() - 0.5) * 0.3);
}

/** The same person seen again: each value moved a little (about 0.15 in euclidean distance overall). */
function seenAgain(base: Float32Array): Float32Array {
  return base.map((v) => v + (random() - 0.5) * 0.045);
}

function distance(a: Float32Array, b: Float32Array): number {
  return Math.sqrt(a.reduce((sum, v, i) => sum + (v - b[i]) ** 2, 0));
}

let next = 0;
function face(descriptor: Float32Array | null, at: number, groupId: string | null = null): GroupingItem {
  return { id: `s${String(next++).padStart(4, '0')}`, seenAt: at, descriptor, groupId };
}

/** Group id -> member ids, largest first. */
function groupsOf(items: GroupingItem[], placed: Map<string, string>): string[][] {
  const groups = new Map<string, string[]>();
  for (const item of items) {
    const g = item.groupId ?? (placed.get(item.id) as string);
    groups.set(g, [...(groups.get(g) ?? []), item.id]);
  }
  return [...groups.values()].sort((a, b) => b.length - a.length);
}

describe('grouping unknown faces by likeness', () => {
  it('puts one stranger seen ten times in one group, apart from two others, largest first', () => {
    const stranger = person();
    const other = person();
    const third = person();
    // The synthetic people are far apart, and one person's faces near each other, as real descriptors are.
    expect(distance(stranger, other)).toBeGreaterThan(1);
    const again = seenAgain(stranger);
    expect(distance(stranger, again)).toBeLessThan(MAX / 2);

    const items: GroupingItem[] = [];
    for (let i = 0; i < 10; i++) items.push(face(seenAgain(stranger), 1000 + i * 10));
    items.push(face(seenAgain(other), 1005), face(seenAgain(other), 1015), face(seenAgain(third), 1020));
    const placed = placeInGroups(items, { max: MAX });

    expect(placed.size).toBe(13);
    const groups = groupsOf(items, placed);
    expect(groups.map((g) => g.length)).toEqual([10, 2, 1]);
    expect(groups[0]).toEqual(items.slice(0, 10).map((i) => i.id));
    // Named after its first face.
    expect(placed.get(items[3].id)).toBe(groupIdFor(items[0].id));
  });

  it('keeps the groups faces are in, and new faces of a known group join it', () => {
    const stranger = person();
    const first = [face(seenAgain(stranger), 1), face(seenAgain(stranger), 2)];
    const before = placeInGroups(first, { max: MAX });
    const stored = first.map((f) => ({ ...f, groupId: before.get(f.id) as string }));

    const newcomer = face(seenAgain(stranger), 3);
    const stranger2 = face(person(), 4);
    const after = placeInGroups([...stored, newcomer, stranger2], { max: MAX });

    // Only the faces without a group are placed; the stored ones keep theirs.
    expect([...after.keys()].sort()).toEqual([newcomer.id, stranger2.id].sort());
    expect(after.get(newcomer.id)).toBe(stored[0].groupId);
    expect(after.get(stranger2.id)).toBe(groupIdFor(stranger2.id));
  });

  it('gives the same groups whatever order the faces come in', () => {
    const a = person();
    const b = person();
    const items = [0, 1, 2, 3, 4, 5].map((i) => face(seenAgain(i % 2 ? a : b), 100 + i));
    const one = placeInGroups(items, { max: MAX });
    const other = placeInGroups([...items].reverse(), { max: MAX });
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
    const placed = placeInGroups(items, { max: MAX });
    expect(new Set(placed.values()).size).toBe(4);
    expect(placed.get(items[0].id)).toBe(groupIdFor(items[0].id));
  });

  it('splits faces farther apart than the limit', () => {
    const stranger = person();
    const items = [face(seenAgain(stranger), 1), face(seenAgain(stranger), 2)];
    expect(new Set(placeInGroups(items, { max: 0.01 }).values()).size).toBe(2);
    expect(new Set(placeInGroups(items, { max: MAX }).values()).size).toBe(1);
  });
});
