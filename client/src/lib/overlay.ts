/**
 * Drawing results over an image: face boxes with label and confidence, object boxes with one colour per
 * class. Boxes are in pixels of the analysed image; the overlay canvas has that same size and is scaled by
 * CSS together with the video or photo under it, so no coordinate mapping is needed here. Label text is sized
 * for the picture as shown (labelPx): a 1280-pixel frame shown 360 CSS pixels wide on a phone would otherwise
 * shrink a 14-pixel label to 4.
 */
import type { FaceResult } from '../../../shared/api/index';
import { objectDisplayName } from '../../../shared/objects/classes';
import type { DetectedObject } from '../../../shared/objects/types';
import { overlayText, type ShownFace, TONE_COLORS, toneOf } from './face-words';
import { layoutLabels, type Rect } from './label-layout';

/** A stable, distinct colour per class id (golden-angle hues). */
export function classColor(classId: number): string {
  return `hsl(${Math.round((classId * 137.508) % 360)} 85% 50%)`;
}

/**
 * A filled tag with white text (or `ink`) above the point (below it at the top edge, or when asked), kept inside
 * the canvas so a box at an edge does not cut its name off.
 */
export function tag(
  ctx: CanvasRenderingContext2D,
  text: string,
  x: number,
  y: number,
  color: string,
  px: number,
  below = false,
  ink = '#fff',
): void {
  const { w, h } = tagSize(ctx, text, px);
  const top = Math.min(ctx.canvas.height - h, below || y - h < 0 ? y : y - h);
  const left = Math.max(0, Math.min(x, ctx.canvas.width - w));
  drawTag(ctx, text, { left, top, w, h }, color, px, ink);
}

/** A tag's size for this text at `px`. */
function tagSize(ctx: CanvasRenderingContext2D, text: string, px: number): { w: number; h: number } {
  ctx.font = `600 ${px}px system-ui, sans-serif`;
  const pad = Math.round(px / 3);
  return { w: Math.min(ctx.canvas.width, ctx.measureText(text).width + 2 * pad), h: px + pad };
}

function drawTag(ctx: CanvasRenderingContext2D, text: string, { left, top, w, h }: Rect, color: string, px: number, ink = '#fff'): void {
  ctx.font = `600 ${px}px system-ui, sans-serif`;
  const pad = Math.round(px / 3);
  ctx.fillStyle = color;
  ctx.fillRect(left, top, w, h);
  ctx.fillStyle = ink;
  ctx.textBaseline = 'middle';
  ctx.fillText(
    fitText(text, w - 2 * pad, (t) => ctx.measureText(t).width),
    left + pad,
    top + h / 2,
    w - 2 * pad,
  );
}

/**
 * The text cut to `width` with an ellipsis ("probably Alb…") where it does not fit: a label shortened to stay beside
 * its face (label-layout.ts) reads as cut, not squeezed into illegible letters. The whole text is in the results list.
 */
export function fitText(text: string, width: number, measure: (t: string) => number): string {
  if (measure(text) <= width) return text;
  let n = text.length - 1;
  while (n > 0 && measure(`${text.slice(0, n).trimEnd()}…`) > width) n--;
  return n > 0 ? `${text.slice(0, n).trimEnd()}…` : '…';
}

/** Line width and font scale for an image of this size, so boxes read the same on a phone photo and a webcam frame. */
export function scaleFor(width: number): number {
  return Math.max(1, width / 640);
}

/** Label text never below this many CSS pixels on screen (WCAG-readable on a phone), nor above the largest. */
export const LABEL_MIN_CSS_PX = 12;
export const LABEL_MAX_CSS_PX = 20;

/**
 * A label's font size in canvas pixels for a canvas `width` pixels wide shown `shownWidth` CSS pixels wide: 14 CSS
 * pixels on a 640-pixel-wide picture, growing and shrinking with the picture as shown, kept within 12 and 20 CSS
 * pixels. Before the canvas is laid out (shown width 0) the picture is taken as shown at its own size.
 */
export function labelPx(width: number, shownWidth: number): number {
  const shown = shownWidth > 0 ? shownWidth : width;
  const css = Math.min(LABEL_MAX_CSS_PX, Math.max(LABEL_MIN_CSS_PX, (14 * shown) / 640));
  return Math.round((css * width) / shown);
}

interface BoxLabel {
  text: string;
  box: { x: number; y: number; w: number; h: number };
  color: string;
  /** The text's colour (white where not given). */
  ink?: string;
}

/** The labels of all boxes, drawn after the boxes and placed so that none covers another (label-layout.ts). */
function labels(ctx: CanvasRenderingContext2D, items: readonly BoxLabel[]): void {
  const px = labelPx(ctx.canvas.width, ctx.canvas.getBoundingClientRect().width);
  const places = layoutLabels(
    items.map((l) => ({ box: l.box, ...tagSize(ctx, l.text, px) })),
    ctx.canvas.width,
    ctx.canvas.height,
  );
  for (const [i, l] of items.entries()) drawTag(ctx, l.text, places[i], l.color, px, l.ink);
}

/** A face's label on the picture (lib/face-words.ts): "alice 87%", "probably alice 64%", "unknown (nearest: bob, 48%)". */
export function faceText(face: ShownFace): string {
  return overlayText(face);
}

export function drawFaces(canvas: HTMLCanvasElement, width: number, height: number, faces: readonly FaceResult[]): void {
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, width, height);
  const s = scaleFor(width);
  // Green when sure, amber when unsure, grey when not named.
  const colors = (f: ShownFace) => TONE_COLORS[toneOf(f)];
  for (const f of faces) {
    ctx.strokeStyle = colors(f).fill;
    ctx.lineWidth = 3 * s;
    ctx.strokeRect(f.x, f.y, f.w, f.h);
  }
  labels(
    ctx,
    faces.map((f) => ({ text: faceText(f), box: f, color: colors(f).fill, ink: colors(f).text })),
  );
}

export function drawObjects(canvas: HTMLCanvasElement, width: number, height: number, objects: readonly DetectedObject[]): void {
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, width, height);
  const s = scaleFor(width);
  for (const o of objects) {
    ctx.strokeStyle = classColor(o.class_id);
    ctx.lineWidth = 3 * s;
    ctx.strokeRect(o.x, o.y, o.w, o.h);
  }
  labels(
    ctx,
    objects.map((o) => ({
      text: `${objectDisplayName(o.class_name)} ${Math.round(o.confidence * 100)}%`,
      box: o,
      color: classColor(o.class_id),
    })),
  );
}
