/**
 * A PPE check drawn over its picture: each person's box in the colour of their verdict (green compliant, red
 * violation) with the missing items named on it, and the protective items the detector found as thin boxes.
 * As in overlay.ts (whose tags and scale it uses), boxes are in pixels of the checked image and the overlay canvas gets that size.
 */
import type { PpeDetectResponse, PpeObject } from '../../../shared/api/index';
import type { PpePerson } from '../../../shared/events/ppe-events';
import { scaleFor, tag } from './overlay';

export const COMPLIANT_COLOR = '#16a34a';
export const VIOLATION_COLOR = '#dc2626';
/** An item found on someone, and a `NO-<item>` detection (the item shown missing). */
const ITEM_COLOR = '#0ea5e9';
const ABSENT_COLOR = '#f97316';

/** What a person's box says: "OK" or the items missing. */
export function personText(p: PpePerson): string {
  return p.status === 'compliant' ? 'OK: all PPE' : `Missing: ${p.missing.join(', ')}`;
}

function isPerson(o: PpeObject): boolean {
  return o.item === null && o.class_name.toLowerCase() === 'person';
}

export function drawPpe(canvas: HTMLCanvasElement, width: number, height: number, r: Pick<PpeDetectResponse, 'objects' | 'persons'>): void {
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext('2d')!;
  ctx.clearRect(0, 0, width, height);
  const s = scaleFor(width);

  // Items first, thin, so the persons' boxes and tags are on top.
  for (const o of r.objects) {
    if (o.item === null || isPerson(o)) continue;
    const color = o.absent ? ABSENT_COLOR : ITEM_COLOR;
    ctx.strokeStyle = color;
    ctx.lineWidth = Math.max(1, 1.5 * s);
    ctx.setLineDash(o.absent ? [6 * s, 4 * s] : []);
    ctx.strokeRect(o.x, o.y, o.w, o.h);
    ctx.setLineDash([]);
    tag(ctx, o.class_name, o.x, o.y + o.h, color, Math.max(10, Math.round(11 * s)), true);
  }

  for (const p of r.persons) {
    const color = p.status === 'compliant' ? COMPLIANT_COLOR : VIOLATION_COLOR;
    ctx.strokeStyle = color;
    ctx.lineWidth = 4 * s;
    ctx.strokeRect(p.x, p.y, p.w, p.h);
    tag(ctx, personText(p), p.x, p.y, color, Math.max(12, Math.round(14 * s)));
  }
}
