/**
 * #36 2: a merge in the trained models' sample labels (merge-models.ts): A's samples under B's id and A's name out;
 * the undo finds them again among B's by their fingerprints, as many of each as were A's.
 */
import { describe, expect, it } from 'vitest';
import type { LabelIds } from '../../shared/recognition/model-files.js';
import { type MovedSamples, mergeSamples, unmergeSamples } from './merge-models.js';

/** A model's samples: each a byte (its content) with a label id. */
function model(samples: [content: number, label: number][]) {
  const labels = Int32Array.from(samples.map(([, l]) => l));
  const sample = (i: number) => Uint8Array.of(samples[i][0]);
  return { labels, sample };
}

function merged(labelIds: LabelIds, m: ReturnType<typeof model>, from: string, into: string) {
  let moved: MovedSamples | undefined;
  const out = mergeSamples(from, into, (x) => {
    moved = x;
  })(m.labels, labelIds, m.sample);
  return { out, moved };
}

describe('a merge in the sample labels', () => {
  it("gives A's samples B's id and drops A's name; the undo gives them back under A's id", () => {
    const m = model([
      [1, 0],
      [2, 1],
      [3, 0],
      [4, 2],
    ]);
    const ids = { a: 0, b: 1, c: 2 };
    const { out, moved } = merged(ids, m, 'a', 'b');
    expect([...(out?.labels ?? [])]).toEqual([1, 1, 1, 2]);
    expect(out?.labelIds).toEqual({ b: 1, c: 2 });
    expect(moved?.id).toBe(0);
    expect(moved?.samples).toHaveLength(2);
    let restored = 0;
    const back = unmergeSamples('a', 'b', moved as MovedSamples, (n) => {
      restored = n;
    })(out?.labels as Int32Array, out?.labelIds as LabelIds, m.sample);
    expect(restored).toBe(2);
    expect([...(back?.labels ?? [])]).toEqual([0, 1, 0, 2]);
    expect(back?.labelIds).toEqual({ a: 0, b: 1, c: 2 });
  });

  it('gives B a new id when the model has none for them, and takes it away again with the undo', () => {
    const m = model([
      [1, 0],
      [2, 1],
    ]);
    const { out, moved } = merged({ a: 0, c: 1 }, m, 'a', 'b');
    expect([...(out?.labels ?? [])]).toEqual([2, 1]);
    expect(out?.labelIds).toEqual({ c: 1, b: 2 });
    const back = unmergeSamples('a', 'b', moved as MovedSamples, () => {})(out?.labels as Int32Array, out?.labelIds as LabelIds, m.sample);
    expect([...(back?.labels ?? [])]).toEqual([0, 1]);
    expect(back?.labelIds).toEqual({ c: 1, a: 0 });
  });

  it('leaves a model that does not know A as it is', () => {
    const m = model([[1, 0]]);
    expect(merged({ b: 0 }, m, 'a', 'b').out).toBeNull();
  });

  it("takes back only as many of a sample as were A's (the same photo enrolled under both), and only from B", () => {
    // A and B each hold a sample 7; C holds one too.
    const m = model([
      [7, 0],
      [7, 1],
      [7, 2],
    ]);
    const { out, moved } = merged({ a: 0, b: 1, c: 2 }, m, 'a', 'b');
    expect([...(out?.labels ?? [])]).toEqual([1, 1, 2]);
    const back = unmergeSamples('a', 'b', moved as MovedSamples, () => {})(out?.labels as Int32Array, out?.labelIds as LabelIds, m.sample);
    expect([...(back?.labels ?? [])].sort()).toEqual([0, 1, 2]);
    expect(back?.labels[2]).toBe(2);
  });

  it("leaves the model as it is when it knows A again (a training since) or holds none of A's samples; A's id taken: a new one", () => {
    const moved: MovedSamples = { id: 0, samples: ['not-a-print'] };
    const m = model([[1, 0]]);
    expect(unmergeSamples('a', 'b', moved, () => {})(m.labels, { a: 5, b: 0 }, m.sample)).toBeNull();
    let restored = -1;
    expect(
      unmergeSamples('a', 'b', moved, (n) => {
        restored = n;
      })(m.labels, { b: 0 }, m.sample),
    ).toBeNull();
    expect(restored).toBe(0);
    // A's old id 0 went to someone else since (a training): A gets a new one.
    const two = model([
      [1, 0],
      [9, 1],
    ]);
    const { out, moved: m2 } = merged({ z: 0, a: 1 }, two, 'a', 'z');
    const renumbered = { ...(out?.labelIds as LabelIds), y: 1 };
    const back = unmergeSamples('a', 'z', m2 as MovedSamples, () => {})(out?.labels as Int32Array, renumbered, two.sample);
    expect(back?.labelIds).toMatchObject({ z: 0, y: 1, a: 2 });
    expect([...(back?.labels ?? [])]).toEqual([0, 2]);
  });
});
