/**
 * Eye-based tilt correction before LBPH (issue #16 item 11), identical in training and recognition, on the server
 * and in the browser. LBPH compares 8x8 cells of texture at fixed places in the 100x100 face, so a head tilted by
 * 10 degrees moves every cell's content and a genuine face's distance rises from about 40 to 72 (bench
 * lbph-robustness, synthetic captures). The face's tilt is measured from its eyes (OpenCV's eye cascade, with
 * Lookout's OpenCV-compatible engine) and undone by rotating the face about the centre of its box before the
 * usual 100x100 crop, with OpenCV's bit-exact warpAffine.
 *
 * What was measured and left out (bench/RESULTS.md, "LBPH across photos"):
 * - Scale and position from the eyes (a full similarity transform): the eye cascade's boxes jitter more than the
 *   face cascade's, so faces aligned that way matched worse on everything but tilt. Only the angle is taken.
 * - Small angles: below MIN_TILT_DEGREES the face is cropped exactly as without alignment (eye jitter alone gives
 *   a few degrees), so upright faces give the same histograms as before.
 * - Histogram equalisation: LBP codes compare each pixel with its neighbours, so any monotonic change of grey
 *   levels (brightness, contrast, gamma, which equalisation also is) leaves them unchanged; it moved no genuine
 *   distance in the measurements and is not applied.
 *
 * The eye search is its own, not the chat features' (facial-features.ts): it looks only in the band where a
 * frontal-face box holds its eyes and accepts an eye only near where eyes sit in such a box, because a wrong
 * eye tilts the face and an unseen one only leaves it as it was.
 */
import { warpAffineGray, type Affine } from '../image/warp.js';
import type { GrayImage, Rect } from '../image/types.js';
import { cropGray } from '../image/ops.js';
import { FACE_SIZE, normalizeFace } from './face-region.js';
import { detectMultiScale, type HaarCascade } from './haar-cascade.js';

/** The normalisation a model's histograms were made with (written in training.yml as `lookout_face_alignment`). */
export const FACE_ALIGNMENT = 'eye-tilt-v1';

/**
 * Where the eyes sit in a haarcascade_frontalface_alt2 box, as fractions of its side (the mean over the faces of
 * the test photos and their tilted, scaled and relit copies: left 0.298, 0.380; right 0.675, 0.377; standard
 * deviation about 0.03).
 */
export const EYE_POSITIONS = { left: { x: 0.3, y: 0.38 }, right: { x: 0.68, y: 0.38 } } as const;
/** An eye counts only within this fraction of the face's side of its expected place (about 3 deviations). */
export const EYE_TOLERANCE = 0.1;
/** The band searched for eyes, as fractions of the face's height (the expected height +- 0.2). */
export const EYE_BAND = { top: 0.18, bottom: 0.58 } as const;
/** The eye cascade's search: few neighbours suffice because the place check above rejects strays. */
export const EYE_SEARCH = { scaleFactor: 1.1, minNeighbors: 3, minSizeOfFace: 0.12 } as const;
/** Tilts under this are left alone (eye jitter); tilts over the maximum are not a frontal face's. */
export const MIN_TILT_DEGREES = 5;
export const MAX_TILT_DEGREES = 25;

export interface EyePair {
  left: { x: number; y: number };
  right: { x: number; y: number };
}

/** The eye cascade's candidates for a face box, as eye centres in image pixels. */
export function eyeCandidates(eyeCascade: HaarCascade, gray: GrayImage, box: Rect): { x: number; y: number }[] {
  const top = box.y + Math.round(EYE_BAND.top * box.height);
  const bottom = box.y + Math.round(EYE_BAND.bottom * box.height);
  const band = cropGray(gray, { x: box.x, y: top, width: box.width, height: bottom - top });
  const min = Math.round(EYE_SEARCH.minSizeOfFace * box.width);
  if (band.width < min || band.height < min || band.width === 0 || band.height === 0) return [];
  const found = detectMultiScale(eyeCascade, band, {
    scaleFactor: EYE_SEARCH.scaleFactor,
    minNeighbors: EYE_SEARCH.minNeighbors,
    minSize: { width: min, height: min },
  });
  const x0 = Math.max(0, Math.floor(box.x));
  const y0 = Math.max(0, top);
  return found.map((e) => ({ x: x0 + e.x + e.width / 2, y: y0 + e.y + e.height / 2 }));
}

/** The eye nearest where one is expected, within the tolerance (ties: the earlier candidate). */
function eyeNear(candidates: readonly { x: number; y: number }[], box: Rect, expected: { x: number; y: number }) {
  const ex = box.x + expected.x * box.width;
  const ey = box.y + expected.y * box.height;
  let best: { x: number; y: number } | null = null;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    if (Math.abs(c.x - ex) > EYE_TOLERANCE * box.width || Math.abs(c.y - ey) > EYE_TOLERANCE * box.height) continue;
    const d = Math.hypot(c.x - ex, c.y - ey);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/** Both eyes of a face box, or null when either is not seen where it should be. */
export function findEyes(eyeCascade: HaarCascade, gray: GrayImage, box: Rect): EyePair | null {
  const candidates = eyeCandidates(eyeCascade, gray, box);
  const left = eyeNear(candidates, box, EYE_POSITIONS.left);
  const right = eyeNear(candidates, box, EYE_POSITIONS.right);
  return left && right ? { left, right } : null;
}

/** The tilt to undo, in radians (positive: the right eye is lower), or 0 when none should be undone. */
export function faceTilt(eyes: EyePair | null): number {
  if (!eyes) return 0;
  const angle = Math.atan2(eyes.right.y - eyes.left.y, eyes.right.x - eyes.left.x);
  const degrees = Math.abs((angle * 180) / Math.PI);
  return degrees < MIN_TILT_DEGREES || degrees > MAX_TILT_DEGREES ? 0 : angle;
}

/** The matrix that turns the face upright about its box centre and scales the box to size x size (as the crop does). */
export function uprightMatrix(box: Rect, tilt: number, size: number): Affine {
  const sx = size / box.width;
  const sy = size / box.height;
  const cos = Math.cos(tilt);
  const sin = Math.sin(tilt);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  // size/2 + S * R(-tilt) * (p - centre)
  const a = sx * cos;
  const b = sx * sin;
  const d = -sy * sin;
  const e = sy * cos;
  return [a, b, size / 2 - (a * cx + b * cy), d, e, size / 2 - (d * cx + e * cy)];
}

/**
 * The recognizer input of a face: upright when its eyes show a tilt, else exactly normalizeFace's crop. Without an
 * eye cascade (a model trained before alignment, see FACE_ALIGNMENT) it is always the plain crop.
 */
export function alignedFace(gray: GrayImage, box: Rect, eyeCascade: HaarCascade | null, size: number = FACE_SIZE): GrayImage {
  const tilt = eyeCascade ? faceTilt(findEyes(eyeCascade, gray, box)) : 0;
  return tilt === 0 ? normalizeFace(gray, box, size) : warpAffineGray(gray, uprightMatrix(box, tilt, size), size, size);
}
