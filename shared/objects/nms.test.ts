import { describe, expect, it } from 'vitest';
import { iou, nmsPerClass } from './nms.js';
import { summarize } from './types.js';

const det = (class_id: number, confidence: number, x: number, y: number, w: number, h: number) => ({ class_id, confidence, x, y, w, h });

describe('iou', () => {
  it('is 1 for equal boxes, 0 for disjoint or touching ones, and symmetric', () => {
    expect(iou({ x: 1, y: 2, w: 10, h: 20 }, { x: 1, y: 2, w: 10, h: 20 })).toBe(1);
    expect(iou({ x: 0, y: 0, w: 10, h: 10 }, { x: 10, y: 0, w: 10, h: 10 })).toBe(0);
    expect(iou({ x: 0, y: 0, w: 10, h: 10 }, { x: 5, y: 0, w: 10, h: 10 })).toBeCloseTo(50 / 150);
    expect(iou({ x: 5, y: 0, w: 10, h: 10 }, { x: 0, y: 0, w: 10, h: 10 })).toBeCloseTo(50 / 150);
    expect(iou({ x: 0, y: 0, w: 0, h: 10 }, { x: 0, y: 0, w: 0, h: 10 })).toBe(0);
  });
});

describe('nmsPerClass', () => {
  it('drops a lower-scored box of the same class above the IoU threshold, keeps other classes', () => {
    const kept = nmsPerClass(
      [det(0, 0.6, 2, 0, 10, 10), det(0, 0.9, 0, 0, 10, 10), det(1, 0.5, 0, 0, 10, 10), det(0, 0.7, 50, 50, 10, 10)],
      0.4,
    );
    expect(kept.map((k) => [k.class_id, k.confidence])).toEqual([
      [0, 0.9],
      [0, 0.7],
      [1, 0.5],
    ]);
  });

  it('keeps a pair whose IoU equals the threshold (only "above" suppresses)', () => {
    // IoU of these two is exactly 1/3.
    expect(nmsPerClass([det(2, 0.9, 0, 0, 10, 10), det(2, 0.8, 5, 0, 10, 10)], 1 / 3)).toHaveLength(2);
    expect(nmsPerClass([det(2, 0.9, 0, 0, 10, 10), det(2, 0.8, 5, 0, 10, 10)], 0.3)).toHaveLength(1);
  });

  it('leaves no same-class pair above the threshold on random boxes, and caps the count', () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const boxes = Array.from({ length: 400 }, () =>
      det(Math.floor(rand() * 3), rand(), rand() * 200, rand() * 200, 5 + rand() * 60, 5 + rand() * 60),
    );
    for (const t of [0.1, 0.4, 0.7]) {
      const kept = nmsPerClass(boxes, t);
      for (let i = 0; i < kept.length; i++) {
        for (let j = i + 1; j < kept.length; j++) {
          if (kept[i].class_id === kept[j].class_id) expect(iou(kept[i], kept[j])).toBeLessThanOrEqual(t);
        }
        if (i > 0) expect(kept[i].confidence).toBeLessThanOrEqual(kept[i - 1].confidence);
      }
    }
    expect(nmsPerClass(boxes, 0.4, 5)).toHaveLength(5);
  });
});

describe('summarize', () => {
  it('counts objects per class name', () => {
    expect(summarize([{ class_name: 'person' }, { class_name: 'cup' }, { class_name: 'person' }])).toEqual({ person: 2, cup: 1 });
    expect(summarize([])).toEqual({});
  });
});
