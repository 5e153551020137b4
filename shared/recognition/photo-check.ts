/**
 * The photo check of enrollment (issue #26 §3): is this training photo worth keeping? From the gray pixels, the
 * face boxes the detector found and, where the host has the eye cascade, the eye candidates of the measured face,
 * it measures the face and gives one verdict with words for a person. Pure and browser-safe: the server's vision
 * workers run it (`checkPhoto`), and so can the browser's engine worker.
 *
 * The measured face is the one picked (`pick`, a box matched to a found face) or else the largest, which is the
 * one training takes (pipeline.ts `sample`). Everything is measured on the face as the recognizers see it: the box
 * cropped and resized to FACE_SIZE x FACE_SIZE (face-region.ts), so a large face and a small one are judged alike.
 *
 * Thresholds, measured on the repository's test photos (test/fixtures/images) with the server's cascade
 * (haarcascade_frontalface_alt2, scaleFactor 1.1, minNeighbors 5, minSize 30) and on copies degraded with sharp
 * (blur, modulate brightness, linear, rotate); photo-check.test.ts keeps these cases:
 * - Size: MIN_FACE_PX = 80, the face's width in pixels. Below it the eye cascade cannot see eyes (facial-features.ts
 *   MIN_FEATURE_FACE) and the 100x100 recognizer input is an upscale. The single-person photos' faces are 239
 *   (grace_hopper) and 97 (astronaut) px; messi5's is 41 px and grace_hopper at a quarter size 55 px.
 * - Sharpness: the variance of the 4-neighbour Laplacian of the 100x100 face divided by the variance of its gray
 *   levels, so contrast and exposure do not move it (a darkened copy keeps its value: grace 0.94 -> 0.85 at 30 %
 *   brightness). In-focus faces measured 0.052 to 0.94 (the main faces of the group photos sample1-6: 0.052 to 0.37;
 *   astronaut 0.14); Gaussian blur of sigma 4 gives 0.014 (grace) and sigma 2 gives 0.007 (astronaut); background
 *   faces of the group photos that look soft measured 0.005 to 0.029. MIN_SHARPNESS = 0.03 lies between.
 * - Darkness: the face's 99th percentile of gray (its highlights), not its mean, so a dark skin in good light (the
 *   sample5 face of mean 58 has highlights at 116) is not "too dark" while an underexposed photo is: grace and
 *   astronaut at 30 % and 40 % brightness have highlights at 59-86; the darkest well-lit face measured 104.
 *   MIN_HIGHLIGHTS = 90.
 * - Brightness: the share of face pixels at 250 or more (burnt out). The fixtures' well-lit faces have at most
 *   0.113 (sample6); grace at 1.3x brightness 0.033, at 1.6x 0.191, at 2x 0.496; the washed-out background faces
 *   of sample6 0.36 to 0.64. MAX_CLIPPED = 0.15.
 * - Frontal: only from evidence. Two eyes seen in the band where a frontal face holds them (eye-alignment.ts) say
 *   how the head is turned: a roll beyond MAX_TILT_DEGREES (25, what the recognizers' tilt correction undoes) or a
 *   midpoint of the eyes more than MAX_EYE_OFFSET (0.12 of the box width) from where frontal faces have it (0.49;
 *   the fixtures' faces measured 0.43 to 0.54) is `not_frontal`. No eyes seen (eyeglasses, a small face) says
 *   nothing: `frontal` is null then, never a verdict.
 */
import { resizeLinearExact, rgbToGray } from '../image/ops.js';
import type { GrayImage, Rect, RgbImage } from '../image/types.js';
import { EYE_BAND, EYE_POSITIONS, MAX_TILT_DEGREES } from '../vision/eye-alignment.js';
import { largestBox, normalizeFace } from '../vision/face-region.js';
import { type DetectOptions, detectMultiScale, type HaarCascade } from '../vision/haar-cascade.js';

export const PHOTO_VERDICTS = ['ok', 'no_face', 'several_faces', 'too_small', 'blurred', 'too_dark', 'too_bright', 'not_frontal'] as const;
export type PhotoVerdict = (typeof PHOTO_VERDICTS)[number];

/** Faces narrower than this (pixels) are too small (see above). */
export const MIN_FACE_PX = 80;
/** Laplacian variance over gray-level variance of the 100x100 face: under this, blurred. */
export const MIN_SHARPNESS = 0.03;
/** The face's 99th percentile of gray: under this, too dark. */
export const MIN_HIGHLIGHTS = 90;
/** Gray level counted as burnt out, and the share of the face allowed to be. */
export const CLIPPED_LEVEL = 250;
export const MAX_CLIPPED = 0.15;
/** How far (share of the box width) the eyes' midpoint may lie from a frontal face's. */
export const MAX_EYE_OFFSET = 0.12;
/** A picked box is that face when their intersection over union is at least this. */
export const PICK_MIN_IOU = 0.3;
/** Good photos a person should have, from different angles (the summary's advice). */
export const RECOMMENDED_PHOTOS = 3;

/** A box in the API's terms. */
export interface FaceBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface PhotoMeasures {
  /** Width of the measured face's box, pixels. */
  face_px: number;
  /** The box's share of the image's area (0..1). */
  face_share: number;
  /** Laplacian variance / gray variance of the 100x100 face. */
  sharpness: number;
  /** Mean gray of the face (0..255), for people; the verdicts use the two below. */
  brightness: number;
  /** 99th percentile of the face's gray. */
  highlights: number;
  /** Share of the face's pixels at CLIPPED_LEVEL or more. */
  clipped: number;
  /** Eyes seen where a face has them (0..2); null when the host could not look (no eye cascade). */
  eyes: number | null;
  /** true: two eyes, upright and centred; false: the eyes show a turned or tilted head; null: cannot tell. */
  frontal: boolean | null;
}

export interface PhotoCheck {
  /** The first of `problems`, or `ok`. */
  verdict: PhotoVerdict;
  /** The verdict in a sentence for a person. */
  message: string;
  /** Every problem found, most serious first (empty: ok). */
  problems: PhotoVerdict[];
  /** Faces found in the photo. */
  faces: number;
  /** The face measured (the picked one, else the largest: the one training takes); null without a face. */
  face: FaceBox | null;
  /** True when `face` is the one the uploader picked among several. */
  picked: boolean;
  measures: PhotoMeasures | null;
  /** The detection engine that found the faces (set by the server's check; absent in the browser's). */
  detection_method?: 'local' | 'remote';
  /** Why the check did not use the selected engine (remote selected but down: the local detector checked). */
  detection_note?: string;
}

export interface PhotoCheckInput {
  gray: GrayImage;
  /** Every face found in the photo. */
  faces: readonly Rect[];
  /** The face chosen by the uploader (image pixels); must match one of `faces` (pickFace). */
  pick?: Rect;
  /** The eye cascade's candidates for the measured face (eye-alignment.ts eyeCandidates); absent: not looked for. */
  eyes?: readonly { x: number; y: number }[];
}

export const toFaceBox = (r: Rect): FaceBox => ({
  x: Math.round(r.x),
  y: Math.round(r.y),
  w: Math.round(r.width),
  h: Math.round(r.height),
});
export const toRect = (b: FaceBox): Rect => ({ x: b.x, y: b.y, width: b.w, height: b.h });

function iou(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

/** The index of the found face the picked box means (best overlap, at least PICK_MIN_IOU), or null. */
export function pickFace(faces: readonly Rect[], pick: Rect): number | null {
  let best: number | null = null;
  let bestIou = PICK_MIN_IOU;
  faces.forEach((f, i) => {
    const v = iou(f, pick);
    if (v >= bestIou) {
      best = i;
      bestIou = v;
    }
  });
  return best;
}

/** The face a check measures: the picked one (null when the pick matches none), else the largest. */
export function measuredFace(faces: readonly Rect[], pick?: Rect): Rect | null {
  if (pick) {
    const i = pickFace(faces, pick);
    return i === null ? null : faces[i];
  }
  return largestBox(faces) ?? null;
}

/** Variance of the 4-neighbour Laplacian over the variance of the gray levels (0 for a flat image). */
export function sharpnessOf(face: GrayImage): number {
  const { width: w, height: h, data: d } = face;
  let s = 0;
  let s2 = 0;
  let n = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1; x < w - 1; x++) {
      const i = y * w + x;
      const l = d[i - 1] + d[i + 1] + d[i - w] + d[i + w] - 4 * d[i];
      s += l;
      s2 += l * l;
      n++;
    }
  }
  if (n === 0) return 0;
  const lapVar = s2 / n - (s / n) ** 2;
  let g = 0;
  let g2 = 0;
  for (const v of d) {
    g += v;
    g2 += v * v;
  }
  const grayVar = g2 / d.length - (g / d.length) ** 2;
  return grayVar > 1e-9 ? lapVar / grayVar : 0;
}

function exposureOf(face: GrayImage): { brightness: number; highlights: number; clipped: number } {
  const hist = new Uint32Array(256);
  let sum = 0;
  for (const v of face.data) {
    hist[v]++;
    sum += v;
  }
  const n = face.data.length;
  let count = 0;
  let highlights = 255;
  for (let v = 0; v < 256; v++) {
    count += hist[v];
    if (count >= 0.99 * n) {
      highlights = v;
      break;
    }
  }
  let clipped = 0;
  for (let v = CLIPPED_LEVEL; v < 256; v++) clipped += hist[v];
  return { brightness: sum / n, highlights, clipped: clipped / n };
}

/** Two eyes seen closer than this (share of the box width) are one eye seen twice. */
const MIN_EYE_GAP = 0.15;

/**
 * The left and right eye among the candidates within the eye band: the pair nearest to where a frontal face's
 * eyes sit (not split at the box's middle: a turned head has both eyes on one side of it).
 */
function eyePair(box: Rect, candidates: readonly { x: number; y: number }[]) {
  const top = box.y + EYE_BAND.top * box.height;
  const bottom = box.y + EYE_BAND.bottom * box.height;
  const inBand = candidates.filter((c) => c.y >= top && c.y <= bottom).sort((a, b) => a.x - b.x);
  const place = (side: 'left' | 'right') => ({
    x: box.x + EYE_POSITIONS[side].x * box.width,
    y: box.y + EYE_POSITIONS[side].y * box.height,
  });
  const [el, er] = [place('left'), place('right')];
  let best: { left: { x: number; y: number } | null; right: { x: number; y: number } | null } = { left: null, right: null };
  let bestD = Number.POSITIVE_INFINITY;
  for (let i = 0; i < inBand.length; i++) {
    for (let j = i + 1; j < inBand.length; j++) {
      const [l, r] = [inBand[i], inBand[j]];
      if (r.x - l.x < MIN_EYE_GAP * box.width) continue;
      const d = Math.hypot(l.x - el.x, l.y - el.y) + Math.hypot(r.x - er.x, r.y - er.y);
      if (d < bestD) {
        best = { left: l, right: r };
        bestD = d;
      }
    }
  }
  if (best.left) return best;
  // One eye (or one place seen twice): counted, on the side it is nearer to.
  const one = inBand[0];
  if (!one) return best;
  return Math.hypot(one.x - el.x, one.y - el.y) <= Math.hypot(one.x - er.x, one.y - er.y)
    ? { left: one, right: null }
    : { left: null, right: one };
}

function frontalOf(
  box: Rect,
  candidates: readonly { x: number; y: number }[] | undefined,
): { eyes: number | null; frontal: boolean | null } {
  if (!candidates) return { eyes: null, frontal: null };
  const { left, right } = eyePair(box, candidates);
  const eyes = (left ? 1 : 0) + (right ? 1 : 0);
  if (!left || !right) return { eyes, frontal: null };
  const roll = Math.abs((Math.atan2(right.y - left.y, right.x - left.x) * 180) / Math.PI);
  const centre = (EYE_POSITIONS.left.x + EYE_POSITIONS.right.x) / 2;
  const offset = Math.abs(((left.x + right.x) / 2 - box.x) / box.width - centre);
  return { eyes, frontal: roll <= MAX_TILT_DEGREES && offset <= MAX_EYE_OFFSET };
}

/** Measures of one face box. */
export function measureFace(gray: GrayImage, box: Rect, eyes?: readonly { x: number; y: number }[]): PhotoMeasures {
  const face = normalizeFace(gray, box);
  const round = (v: number, digits: number) => Number(v.toFixed(digits));
  const exposure = exposureOf(face);
  return {
    face_px: Math.round(box.width),
    face_share: round((box.width * box.height) / (gray.width * gray.height), 4),
    sharpness: round(sharpnessOf(face), 4),
    brightness: round(exposure.brightness, 1),
    highlights: exposure.highlights,
    clipped: round(exposure.clipped, 3),
    ...frontalOf(box, eyes),
  };
}

const COUNT_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
const countWord = (n: number) => COUNT_WORDS[n] ?? String(n);

/** The verdict in a sentence. */
export function verdictMessage(verdict: PhotoVerdict, faces: number, measures: PhotoMeasures | null): string {
  switch (verdict) {
    case 'ok':
      return 'Good photo: one clear face.';
    case 'no_face':
      return 'No face found: the photo needs a face in view, facing the camera.';
    case 'several_faces':
      return `${countWord(faces).replace(/^./, (c) => c.toUpperCase())} faces: pick one (send its box as "face").`;
    case 'too_small':
      return `Too small: the face is ${measures?.face_px ?? 0} px wide, at least ${MIN_FACE_PX} px recognises well; come closer.`;
    case 'blurred':
      return 'Blurred: the face is not sharp enough to recognise.';
    case 'too_dark':
      return 'Too dark: add light in front of the face.';
    case 'too_bright':
      return 'Too bright: the face is washed out; move out of direct light.';
    case 'not_frontal':
      return 'Not frontal: the head is turned or tilted; look straight at the camera.';
  }
}

/**
 * The check of one photo. Problems, most serious first: no face, several faces (none picked), then of the measured
 * face: too small, too dark, too bright, blurred (darkness and glare also hide detail), not frontal.
 * A `pick` that matches none of the faces gives `no_face` with `picked: false` (callers refuse such a pick).
 */
export function checkPhoto(input: PhotoCheckInput): PhotoCheck {
  const { gray, faces, pick } = input;
  const face = measuredFace(faces, pick);
  const problems: PhotoVerdict[] = [];
  let measures: PhotoMeasures | null = null;
  if (!face) problems.push('no_face');
  else {
    if (faces.length > 1 && !pick) problems.push('several_faces');
    measures = measureFace(gray, face, input.eyes);
    if (measures.face_px < MIN_FACE_PX) problems.push('too_small');
    if (measures.highlights < MIN_HIGHLIGHTS) problems.push('too_dark');
    if (measures.clipped > MAX_CLIPPED) problems.push('too_bright');
    if (measures.sharpness < MIN_SHARPNESS) problems.push('blurred');
    if (measures.frontal === false) problems.push('not_frontal');
  }
  const verdict = problems[0] ?? 'ok';
  return {
    verdict,
    message: verdictMessage(verdict, faces.length, measures),
    problems,
    faces: faces.length,
    face: face ? toFaceBox(face) : null,
    picked: Boolean(pick && face),
    measures,
  };
}

/** Photos up to this many pixels are looked at again, enlarged, when no face was found in them (findSmallFaces). */
export const SMALL_FACE_RETRY_MAX_PIXELS = 1_000_000;
/**
 * Neighbouring hits a face needs in the enlarged photo: more than the cascade's 5, since enlarging also makes
 * face-like texture (coins) look like faces; 8 keeps every test photo without a face free of one.
 */
export const SMALL_FACE_MIN_NEIGHBORS = 8;

/**
 * The faces of a photo in which the detector found none, looked for again at twice its size, in the photo's pixels:
 * a face under about 40 px escapes the cascade (its minimum size, and too few neighbouring hits at that size), and a
 * person who uploads one must read "too small", not "no face". Larger photos are not enlarged (seconds of work).
 */
export function findSmallFaces(gray: GrayImage, cascade: HaarCascade, options: DetectOptions): Rect[] {
  if (gray.width * gray.height > SMALL_FACE_RETRY_MAX_PIXELS) return [];
  const up = resizeLinearExact(gray, gray.width * 2, gray.height * 2);
  const found = detectMultiScale(cascade, up, { ...options, minNeighbors: Math.max(SMALL_FACE_MIN_NEIGHBORS, options.minNeighbors ?? 0) });
  return found.map((b) => ({
    x: Math.round(b.x / 2),
    y: Math.round(b.y / 2),
    width: Math.round(b.width / 2),
    height: Math.round(b.height / 2),
  }));
}

/** For hosts that hold colour pixels (the browser's engine worker). */
export function checkPhotoRgb(rgb: RgbImage, faces: readonly Rect[], pick?: Rect): PhotoCheck {
  return checkPhoto({ gray: rgbToGray(rgb), faces, ...(pick ? { pick } : {}) });
}

/** One person's photos in a sentence. */
export interface EnrollmentSummary {
  photos: number;
  /** Photos whose check said `ok`. */
  good: number;
  /** Photos whose check found a problem. */
  problems: number;
  /** Photos stored without a check (before checks existed): counted as usable. */
  unchecked: number;
  /** Whether there are RECOMMENDED_PHOTOS usable photos. */
  enough: boolean;
  advice: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The summary of a person's photos from their checks' verdicts (null: not checked). */
export function enrollmentSummary(verdicts: readonly (PhotoVerdict | null | undefined)[]): EnrollmentSummary {
  const photos = verdicts.length;
  const good = verdicts.filter((v) => v === 'ok').length;
  const unchecked = verdicts.filter((v) => v === null || v === undefined).length;
  const problems = photos - good - unchecked;
  const need = Math.max(0, RECOMMENDED_PHOTOS - good - unchecked);
  const parts = [plural(photos, 'photo')];
  if (problems) parts.push(`${problems} with a problem`);
  if (unchecked) parts.push(`${unchecked} not checked`);
  let advice: string;
  if (photos === 0) advice = `No photos yet: add ${RECOMMENDED_PHOTOS} from different angles`;
  else if (need > 0) advice = `${parts.join(', ')}: add ${need} more from other angles`;
  else advice = `${parts.join(', ')}: enough to train${problems ? ' (replace the ones with a problem for better results)' : ''}`;
  return { photos, good, problems, unchecked, enough: need === 0, advice };
}
