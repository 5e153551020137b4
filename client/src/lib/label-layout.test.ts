import { describe, expect, it } from 'vitest';
import { layoutLabels, type Rect } from './label-layout';

const overlaps = (a: Rect, b: Rect) => a.left < b.left + b.w && b.left < a.left + a.w && a.top < b.top + b.h && b.top < a.top + a.h;

function noneOverlap(rects: Rect[]): boolean {
  return rects.every((a, i) => rects.every((b, j) => i === j || !overlaps(a, b)));
}

describe('layoutLabels', () => {
  it('puts a lone label above its box', () => {
    expect(layoutLabels([{ box: { x: 100, y: 100, w: 50, h: 50 }, w: 80, h: 20 }], 640, 480)).toEqual([
      { left: 100, top: 80, w: 80, h: 20 },
    ]);
  });

  it('puts the label of a face at the top edge below it, never over the face (#29)', () => {
    expect(layoutLabels([{ box: { x: 0, y: 5, w: 50, h: 50 }, w: 80, h: 20 }], 640, 480)[0]).toMatchObject({ left: 0, top: 55 });
  });

  it('keeps a label inside the canvas when its box fills the picture', () => {
    expect(layoutLabels([{ box: { x: 0, y: 0, w: 390, h: 300 }, w: 80, h: 20 }], 390, 300)[0]).toEqual({ left: 0, top: 0, w: 80, h: 20 });
  });

  it('moves the second of two labels that would cover each other (overlapping boxes)', () => {
    const rects = layoutLabels(
      [
        { box: { x: 100, y: 100, w: 60, h: 60 }, w: 90, h: 20 },
        { box: { x: 130, y: 105, w: 60, h: 60 }, w: 90, h: 20 },
      ],
      640,
      480,
    );
    expect(rects[0]).toEqual({ left: 100, top: 80, w: 90, h: 20 });
    expect(noneOverlap(rects)).toBe(true);
  });

  it('finds a free place for every label of a crowded row of faces', () => {
    const labels = Array.from({ length: 6 }, (_, i) => ({ box: { x: 100 + i * 30, y: 200, w: 40, h: 40 }, w: 90, h: 20 }));
    const rects = layoutLabels(labels, 640, 480);
    expect(noneOverlap(rects)).toBe(true);
    for (const r of rects) expect(r.top + r.h).toBeLessThanOrEqual(480);
    // Nor over any face of the row (#29: the third and later labels went inside their boxes, over the faces).
    const boxes = labels.map(({ box }) => ({ left: box.x, top: box.y, w: box.w, h: box.h }));
    for (const r of rects) for (const b of boxes) expect(overlaps(r, b)).toBe(false);
  });

  it('keeps a label off a neighbour’s face: two faces one above the other', () => {
    const rects = layoutLabels(
      [
        { box: { x: 100, y: 130, w: 60, h: 60 }, w: 90, h: 20 },
        { box: { x: 100, y: 40, w: 60, h: 80 }, w: 90, h: 20 },
      ],
      640,
      480,
    );
    expect(rects[0]).toEqual({ left: 100, top: 190, w: 90, h: 20 });
    expect(noneOverlap(rects)).toBe(true);
  });
});

describe('layoutLabels on a group photo (#36)', () => {
  /** Two rows of six faces, close together as on a phone: long labels ("probably Albert Einstein 64%"). */
  const group = Array.from({ length: 12 }, (_, i) => ({
    box: { x: 8 + (i % 6) * 48, y: i < 6 ? 40 : 104, w: 40, h: 40 },
    w: 130,
    h: 20,
  }));
  const rects = layoutLabels(group, 320, 200);
  const boxes = group.map(({ box }) => ({ left: box.x, top: box.y, w: box.w, h: box.h }));

  it('no label covers a face or another label', () => {
    expect(noneOverlap(rects)).toBe(true);
    for (const r of rects) for (const b of boxes) expect(overlaps(r, b), JSON.stringify({ r, b })).toBe(false);
  });

  it('each label touches its own face (not pushed between the rows), shortened where the full one has no room', () => {
    for (const [i, r] of rects.entries()) {
      const b = boxes[i];
      expect([b.top - r.h, b.top + b.h]).toContain(r.top);
      expect(r.left + r.w).toBeGreaterThan(b.left);
      expect(r.left).toBeLessThan(b.left + b.w);
    }
    expect(rects.some((r) => r.w < 130)).toBe(true);
  });

  it('a label with room keeps its full width', () => {
    expect(layoutLabels([group[0]], 320, 200)[0].w).toBe(130);
  });
});
