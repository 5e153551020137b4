/**
 * Whether a face is seen in profile, the original service's `features.profile_face`: OpenCV's profile-face Haar
 * cascade (haarcascade_profileface.xml, opencv-data 4.6, in public/models) with the original's parameters
 * (scaleFactor 1.1, minNeighbors 3, OpenCV's default smallest window: the cascade's own 20x20). Browser-safe, like
 * facial-features.ts.
 *
 * Two departures from the original, which ran the cascade on the face box alone: on the test photos that never
 * fired (the cascade was trained on windows with the outline of the head around a turned face, which a tight
 * frontal box cuts off), so the search covers the box widened by PROFILE_MARGIN on each side; and the cascade knows
 * faces turned one way only, so the mirrored region is searched too (OpenCV's tutorials do the same).
 */
import type { GrayImage, Rect } from '../image/types.js';
import { detectMultiScale, type CascadeScan, type DetectOptions, type HaarCascade } from './haar-cascade.js';

export const PROFILE_CASCADE_FILE = 'haarcascade_profileface.xml';

/** The original's detectMultiScale options. */
export const PROFILE_SEARCH: DetectOptions = { scaleFactor: 1.1, minNeighbors: 3, minSize: { width: 20, height: 20 } };

/** How far the searched region reaches past the face box on each side, as a fraction of the box's size. */
export const PROFILE_MARGIN = 0.25;

/** The region searched around a face box (in image pixels; the caller clips it to the image). */
export function profileRegion(box: { x: number; y: number; w: number; h: number }): Rect {
  const dx = Math.round(box.w * PROFILE_MARGIN);
  const dy = Math.round(box.h * PROFILE_MARGIN);
  return { x: box.x - dx, y: box.y - dy, width: box.w + 2 * dx, height: box.h + 2 * dy };
}

function mirrored(image: GrayImage): GrayImage {
  const { width, height, data } = image;
  const out = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) out[row + x] = data[row + width - 1 - x];
  }
  return { width, height, data: out };
}

/** True when the profile cascade finds a face turned either way in the region around a face (profileRegion). */
export function profileFaceFound(cascade: HaarCascade, region: GrayImage, scan: CascadeScan = 'auto'): boolean {
  if (region.width < 20 || region.height < 20) return false;
  return (
    detectMultiScale(cascade, region, PROFILE_SEARCH, scan).length > 0 ||
    detectMultiScale(cascade, mirrored(region), PROFILE_SEARCH, scan).length > 0
  );
}
