/**
 * Facial features of one detected face, for chat (issue #19 item 3, the original service's `features`): how many
 * eyes are seen, whether the person smiles, whether they wear eyeglasses. OpenCV's eye, eye-with-eyeglasses and
 * smile Haar cascades (opencv-data 4.6, in public/models) run on the face's own pixels with Lookout's
 * OpenCV-compatible cascade engine (haar-cascade.ts), so the boxes are OpenCV's (facial-features.test.ts checks
 * them against fixtures made by OpenCV). Browser-safe: the server's vision workers and the browser's engine worker
 * both run this module.
 *
 * Where and how each cascade looks (the nested-detection pattern of OpenCV's tutorials: search inside the face box
 * only, eyes in its upper half, the mouth in its lower part), with the values measured on the faces of the test
 * images (scripts/fixtures/features_fixtures.py makes the fixtures; the figures are in the test's comments):
 * - Eyes: the upper half of the face (the eyes of a frontal-face box lie at 20-45 % of its height; the lower half
 *   only adds nostrils and mouth corners). scaleFactor 1.05 rather than the usual 1.1: the half-face is small, so
 *   a finer pyramid gives the few eye-sized levels a chance; minNeighbors 5 (OpenCV's default, the tutorials'
 *   value); minSize a square of 1/8 of the face width (an eye is about 1/4; smaller windows are eyebrow and lash
 *   texture).
 * - Eyeglasses: the same search with the eye-with-eyeglasses cascade, which was trained on eyes with and without
 *   glasses, while the plain eye cascade was trained without and loses eyes behind lenses and frames. A face on
 *   which the eyeglasses cascade finds more eyes (up to two) than the plain one is wearing eyeglasses.
 * - Smile: the lower third of the face (the mouth; the half that tutorials use also holds the cheeks and, on older
 *   faces, wrinkles the smile cascade fires on), scaleFactor 1.1, minNeighbors 20 (the tutorials' 20 to 22: the
 *   smile cascade fires many times on any mouth, a real smile gathers many neighbours), minSize half the face wide
 *   and a quarter high (a smile spans about half the face width; smaller windows are lips and teeth parts).
 * - Faces under MIN_FEATURE_FACE pixels are not searched: their eyes are smaller than the eye cascade's 20x20
 *   window, so nothing could be found, and "no eyes" would read as a fact.
 */
import { cropGray, rgbToGray } from '../image/ops.js';
import type { GrayImage, Rect, RgbImage } from '../image/types.js';
import { detectMultiScale, parseHaarCascade, type CascadeScan, type DetectOptions, type HaarCascade } from './haar-cascade.js';

/** The cascade files (public/models, from opencv-data), by the feature they serve. */
export const FEATURE_CASCADE_FILES = {
  eye: 'haarcascade_eye.xml',
  eyeglasses: 'haarcascade_eye_tree_eyeglasses.xml',
  smile: 'haarcascade_smile.xml',
} as const;

export type FeatureCascadeName = keyof typeof FEATURE_CASCADE_FILES;
export type FeatureCascades = Record<FeatureCascadeName, HaarCascade>;
export type FeatureCascadeTexts = Record<FeatureCascadeName, string>;

/** Faces narrower or lower than this (pixels) are not searched (see above). */
export const MIN_FEATURE_FACE = 80;

/** A box in pixels of the analysed image, in the API's face-box terms. */
export interface FeatureBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The features of one face, as the chat analysis gives them (shared/api/chat.ts `FacialFeatures`). */
export interface FacialFeatures {
  /** Eyes seen, 0 to 2. */
  eyes: number;
  /** Their boxes in image pixels, left to right. */
  eye_boxes: FeatureBox[];
  smiling: boolean;
  eyeglasses: boolean;
  /** The face was under MIN_FEATURE_FACE pixels and not searched: the other fields say nothing then. */
  face_too_small: boolean;
}

/** Parses one feature cascade (HaarCascadeParseError, naming the file, for a broken one). */
export function parseFeatureCascade(name: FeatureCascadeName, text: string): HaarCascade {
  try {
    return parseHaarCascade(text);
  } catch (err) {
    if (err instanceof Error) err.message = `${FEATURE_CASCADE_FILES[name]} (${name} cascade): ${err.message}`;
    throw err;
  }
}

/** Parses the three cascades. */
export function parseFeatureCascades(texts: FeatureCascadeTexts): FeatureCascades {
  return {
    eye: parseFeatureCascade('eye', texts.eye),
    eyeglasses: parseFeatureCascade('eyeglasses', texts.eyeglasses),
    smile: parseFeatureCascade('smile', texts.smile),
  };
}

/** Where in a w x h face (face pixels) and with which detectMultiScale options each cascade looks. */
export function featureSearches(w: number, h: number): Record<FeatureCascadeName, { region: Rect; options: DetectOptions }> {
  const upperHalf: Rect = { x: 0, y: 0, width: w, height: Math.floor(h / 2) };
  const eyeMin = Math.floor(w / 8);
  const eye: DetectOptions = { scaleFactor: 1.05, minNeighbors: 5, minSize: { width: eyeMin, height: eyeMin } };
  const mouthTop = Math.floor((2 * h) / 3);
  return {
    eye: { region: upperHalf, options: eye },
    eyeglasses: { region: upperHalf, options: eye },
    smile: {
      region: { x: 0, y: mouthTop, width: w, height: h - mouthTop },
      options: { scaleFactor: 1.1, minNeighbors: 20, minSize: { width: Math.floor(w / 2), height: Math.floor(w / 4) } },
    },
  };
}

/** Each cascade's boxes in a face image (face pixels), as OpenCV's detectMultiScale gives them on the same region. */
export function featureDetections(
  cascades: FeatureCascades,
  face: GrayImage,
  scan: CascadeScan = 'auto',
): Record<FeatureCascadeName, Rect[]> {
  const searches = featureSearches(face.width, face.height);
  const find = (name: FeatureCascadeName): Rect[] => {
    const { region, options } = searches[name];
    return detectMultiScale(cascades[name], cropGray(face, region), options, scan).map((r) => ({
      ...r,
      x: r.x + region.x,
      y: r.y + region.y,
    }));
  };
  return { eye: find('eye'), eyeglasses: find('eyeglasses'), smile: find('smile') };
}

/** Up to two eyes: the largest boxes (ties: the earlier), left to right. */
function twoEyes(boxes: readonly Rect[]): Rect[] {
  const ranked = boxes.map((b, i) => ({ b, i })).sort((p, q) => q.b.width * q.b.height - p.b.width * p.b.height || p.i - q.i);
  return ranked
    .slice(0, 2)
    .map((r) => r.b)
    .sort((p, q) => p.x - q.x || p.y - q.y);
}

/**
 * The features of a face given as its own gray image (the face box's pixels); `origin` is where that box lies in
 * the analysed image, so the eye boxes come back in image pixels.
 */
export function facialFeaturesOfFace(
  cascades: FeatureCascades,
  face: GrayImage,
  origin: { x: number; y: number } = { x: 0, y: 0 },
  scan: CascadeScan = 'auto',
): FacialFeatures {
  if (face.width < MIN_FEATURE_FACE || face.height < MIN_FEATURE_FACE) return noFeatures();
  const found = featureDetections(cascades, face, scan);
  const eyeglasses = Math.min(2, found.eyeglasses.length) > Math.min(2, found.eye.length);
  const eyes = twoEyes(eyeglasses ? found.eyeglasses : found.eye);
  return {
    eyes: eyes.length,
    eye_boxes: eyes.map((r) => ({ x: r.x + origin.x, y: r.y + origin.y, w: r.width, h: r.height })),
    smiling: found.smile.length > 0,
    eyeglasses,
    face_too_small: false,
  };
}

/** The face box as whole pixels inside the image (what cropGray takes), or null when nothing of it is inside. */
function clipBox(width: number, height: number, box: Rect): Rect | null {
  const x0 = Math.max(0, Math.floor(box.x));
  const y0 = Math.max(0, Math.floor(box.y));
  const x1 = Math.min(width, Math.floor(box.x + box.width));
  const y1 = Math.min(height, Math.floor(box.y + box.height));
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
}

/** The features of the face at `box` in a gray image (the browser engine's case: it keeps the frame's gray). */
export function facialFeatures(cascades: FeatureCascades, gray: GrayImage, box: Rect, scan: CascadeScan = 'auto'): FacialFeatures {
  const clipped = clipBox(gray.width, gray.height, box);
  return clipped ? facialFeaturesOfFace(cascades, cropGray(gray, clipped), clipped, scan) : noFeatures();
}

/** A face crop of an RGB(A) image, ready for facialFeaturesOfFace: the same gray as cropping rgbToGray(rgb). */
export function grayFaceCrop(rgb: RgbImage, box: Rect): { gray: GrayImage; origin: { x: number; y: number } } | null {
  const clipped = clipBox(rgb.width, rgb.height, box);
  if (!clipped) return null;
  const { x, y, width, height } = clipped;
  const c = rgb.channels;
  const data = new Uint8Array(width * height * c);
  for (let row = 0; row < height; row++) {
    const start = ((y + row) * rgb.width + x) * c;
    data.set(rgb.data.subarray(start, start + width * c), row * width * c);
  }
  return { gray: rgbToGray({ width, height, channels: c, data }), origin: { x, y } };
}

/** The features as the chat analysis gives them: Lookout's names and the original service's beside them. */
export interface ChatFacialFeatures extends FacialFeatures {
  /** The profile-face cascade found a face turned to one side (shared/vision/profile-face.ts); where it ran. */
  profile_face?: boolean;
  eyes_detected: number;
  glasses_detected: boolean;
  smile_detected: boolean;
  face_width: number;
  face_height: number;
  aspect_ratio: number;
}

/** Adds the original service's names for a face's features (issue #19: its clients read these). */
export function withOriginalNames(
  features: FacialFeatures & { profile_face?: boolean },
  face: { w: number; h: number },
): ChatFacialFeatures {
  return {
    ...features,
    eyes_detected: features.eyes,
    glasses_detected: features.eyeglasses,
    smile_detected: features.smiling,
    face_width: Math.round(face.w),
    face_height: Math.round(face.h),
    aspect_ratio: face.h > 0 ? Math.round((face.w / face.h) * 100) / 100 : 0,
  };
}

/** What a face that was not searched reports (too small, or no pixels of it inside the image). */
export function noFeatures(): FacialFeatures {
  return { eyes: 0, eye_boxes: [], smiling: false, eyeglasses: false, face_too_small: true };
}
