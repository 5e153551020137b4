/**
 * Drawing results over an image: face boxes with label and confidence, object boxes with one colour per
 * class. Boxes are in pixels of the analysed image; the overlay canvas has that same size and is scaled by
 * CSS together with the video or photo under it, so no coordinate mapping is needed here.
 */
import type { FaceResult } from '../../../shared/api/index';
import type { DetectedObject } from '../../../shared/objects/types';

/** A stable, distinct colour per class id (golden-angle hues). */
export function classColor(classId: number): string {
  return `hsl(${Math.round((classId * 137.508) % 360)} 85% 50%)`;
}

/**
 * A filled tag with white text above the point (below it at the top edge, or when asked), kept inside the canvas
 * so a box at an edge does not cut its name off.
 */
export function tag(ctx: CanvasRenderingContext2D, text: string, x: number, y: number, color: string, px: number, below = false): void {
  ctx.font = `600 ${px}px system-ui, sans-serif`;
  const pad = Math.round(px / 3);
  const w = Math.min(ctx.canvas.width, ctx.measureText(text).width + 2 * pad);
  const h = px + pad;
  const top = Math.min(ctx.canvas.height - h, below || y - h < 0 ? y : y - h);
  const left = Math.max(0, Math.min(x, ctx.canvas.width - w));
  ctx.fillStyle = color;
  ctx.fillRect(left, top, w, h);
  ctx.fillStyle = '#fff';
  ctx.textBaseline = 'middle';
  ctx.fillText(text, left + pad, top + h / 2, w - 2 * pad);
}

function label(ctx: CanvasRenderingContext2D, text: string, x: number, y: number, color: string, scale: number): void {
  tag(ctx, text, x, y, color, Math.max(12, Math.round(14 * scale)));
}

/** Line width and font scale for an image of this size, so boxes read the same on a phone photo and a webcam frame. */
export function scaleFor(width: number): number {
  return Math.max(1, width / 640);
}

export function faceText(face: FaceResult): string {
  return face.label === 'unknown' ? 'unknown' : `${face.label} ${Math.round(face.confidence)}%`;
}

export function drawFaces(canvas: HTMLCanvasElement, width: number, height: number, faces: readonly FaceResult[]): void {
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, width, height);
  const s = scaleFor(width);
  for (const f of faces) {
    const color = f.label === 'unknown' ? '#e63946' : '#2a9d8f';
    ctx.strokeStyle = color;
    ctx.lineWidth = 3 * s;
    ctx.strokeRect(f.x, f.y, f.w, f.h);
    label(ctx, faceText(f), f.x, f.y, color, s);
  }
}

export function drawObjects(canvas: HTMLCanvasElement, width: number, height: number, objects: readonly DetectedObject[]): void {
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, width, height);
  const s = scaleFor(width);
  for (const o of objects) {
    const color = classColor(o.class_id);
    ctx.strokeStyle = color;
    ctx.lineWidth = 3 * s;
    ctx.strokeRect(o.x, o.y, o.w, o.h);
    label(ctx, `${o.class_name} ${Math.round(o.confidence * 100)}%`, o.x, o.y, color, s);
  }
}
