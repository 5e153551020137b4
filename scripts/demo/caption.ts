/**
 * The tour's captions: a box injected into the page under test, white on black with a yellow edge (high contrast
 * for a projector), `role="status"` so a screen reader reads each new caption. It never takes clicks
 * (`pointer-events: none`), so the tour's own clicks go through it. It sits in whichever corner of the viewport
 * leaves the step's subject (what the caption describes) uncovered: the 1280x800 tour has room beside or under
 * every subject, and a caption over a face card or a summary hides the very thing it talks about.
 */
import type { Locator, Page } from '@playwright/test';

export const CAPTION_ID = 'lookout-demo-caption';

/** A rectangle in viewport pixels. */
export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The area two rectangles share, in square pixels (0: they do not overlap). */
export function overlapArea(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * Where a caption of `size` goes in a viewport of `viewport`, below a header `top` px tall: the first corner
 * (bottom right, bottom left, top right, top left) that covers none of `subjects`, else the one covering least.
 * Returns the caption's rectangle and how many square pixels of the subjects it still covers.
 */
export function placeCaption(
  size: { width: number; height: number },
  viewport: { width: number; height: number },
  subjects: readonly Rect[],
  top = 0,
  margin = 16,
): { rect: Rect; covered: number } {
  const right = viewport.width - size.width - margin;
  const bottom = viewport.height - size.height - margin;
  const corners: Rect[] = [
    { x: right, y: bottom, ...size },
    { x: margin, y: bottom, ...size },
    { x: right, y: top + margin, ...size },
    { x: margin, y: top + margin, ...size },
  ];
  let best = { rect: corners[0], covered: Number.POSITIVE_INFINITY };
  for (const rect of corners) {
    const covered = subjects.reduce((sum, s) => sum + overlapArea(rect, s), 0);
    if (covered < best.covered) best = { rect, covered };
    if (covered === 0) break;
  }
  return best;
}

/**
 * Shows `text` (under a small "Step n of m" line) until the next caption (a page load removes it), in the corner
 * that leaves `subjects` uncovered. Returns how many square pixels of the subjects it covers (0 when it found room).
 */
export async function showCaption(page: Page, heading: string, text: string, subjects: readonly Locator[] = []): Promise<number> {
  // A string: this project's node code is type-checked without the DOM library.
  const size = await page.evaluate<{ width: number; height: number; top: number }>(`(() => {
    let box = document.getElementById(${JSON.stringify(CAPTION_ID)});
    if (!box) {
      box = document.createElement('div');
      box.id = ${JSON.stringify(CAPTION_ID)};
      box.setAttribute('role', 'status');
      box.setAttribute('aria-live', 'polite');
      box.style.cssText = [
        'position: fixed', 'left: 16px', 'top: 16px', 'z-index: 2147483647',
        'max-width: min(460px, calc(100vw - 32px))', 'box-sizing: border-box', 'padding: 12px 20px', 'border-radius: 10px',
        'background: #000', 'color: #fff', 'border: 3px solid #ffd400', 'box-shadow: 0 4px 24px rgba(0,0,0,.5)',
        'font: 500 18px/1.35 system-ui, sans-serif', 'pointer-events: none', 'text-align: left',
      ].join(';');
      const head = document.createElement('div');
      head.style.cssText = 'font-size: 14px; font-weight: 700; color: #ffd400; letter-spacing: .04em; text-transform: uppercase';
      const body = document.createElement('div');
      box.append(head, body);
      document.body.append(box);
    }
    box.children[0].textContent = ${JSON.stringify(heading)};
    box.children[1].textContent = ${JSON.stringify(text)};
    const r = box.getBoundingClientRect();
    const header = document.querySelector('header');
    return { width: Math.ceil(r.width), height: Math.ceil(r.height), top: header ? Math.ceil(header.getBoundingClientRect().bottom) : 0 };
  })()`);
  const viewport = page.viewportSize() ?? { width: 1280, height: 800 };
  const rects: Rect[] = [];
  for (const subject of subjects) {
    for (const one of await subject.all()) {
      const box = await one.boundingBox();
      if (box) rects.push(box);
    }
  }
  const { rect, covered } = placeCaption(size, viewport, rects, size.top);
  await page.evaluate(`(() => {
    const box = document.getElementById(${JSON.stringify(CAPTION_ID)});
    box.style.left = '${rect.x}px';
    box.style.top = '${rect.y}px';
  })()`);
  return covered;
}

/** The caption on screen now, or null (for the tour's checks). */
export function captionText(page: Page): Promise<string | null> {
  return page.evaluate(`document.getElementById(${JSON.stringify(CAPTION_ID)})?.children[1].textContent ?? null`);
}
