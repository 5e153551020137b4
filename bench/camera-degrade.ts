/**
 * Queries degraded the way real cameras degrade them (#34 section 1), for the open-set benchmark: a face seen
 * smaller (40 to 90 px wide), soft (Gaussian blur), lit from one side, and JPEG-compressed at quality 40 to 60, in
 * that order (a camera's optics and light come before its encoder). Enrolment photos stay clean: a site enrols
 * through the guided enrolment, whose photo check refuses the poor ones (shared/recognition/photo-check.ts).
 *
 * Every degradation is drawn from a seeded generator, so a run is repeatable and two runs of the bench see the same
 * pictures. The face is cut out with a margin of context (the landmark net and the eye cascade look around the
 * box), degraded, and its box carried into the new picture's pixels.
 */
import sharp from 'sharp';
import { rgbToGray } from '../shared/image/ops.js';
import type { GrayImage, Rect, RgbImage } from '../shared/image/types.js';

export interface Photo {
  rgb: RgbImage;
  gray: GrayImage;
}

export interface Degradation {
  /** The face's width after scaling (pixels); null keeps its size. Never an upscale. */
  facePx: number | null;
  /** JPEG quality of the re-encoding; null: none. */
  jpeg: number | null;
  /** Gaussian blur sigma, in the scaled picture's pixels (0: none). */
  blur: number;
  /** Side light: the far side's brightness relative to the near side (1: even light), falling linearly across. */
  sideLight: number;
  /** Which side is lit. */
  litFrom: 'left' | 'right';
}

export const CLEAN: Degradation = Object.freeze({ facePx: null, jpeg: null, blur: 0, sideLight: 1, litFrom: 'left' });

/**
 * A camera's degradation drawn at random: face 40 to 90 px, JPEG quality 40 to 60, blur sigma 0 to 1.2 px, and in
 * half the draws a side light that leaves the far side at 35 to 70 % of the near one.
 */
export function drawDegradation(random: () => number): Degradation {
  const facePx = Math.round(40 + random() * 50);
  const jpeg = Math.round(40 + random() * 20);
  const blur = Math.round(random() * 12) / 10;
  const side = random() < 0.5;
  return {
    facePx,
    jpeg,
    blur,
    sideLight: side ? Math.round((0.35 + random() * 0.35) * 100) / 100 : 1,
    litFrom: random() < 0.5 ? 'left' : 'right',
  };
}

export function describeDegradation(d: Degradation): string {
  const parts: string[] = [];
  if (d.facePx !== null) parts.push(`${d.facePx} px`);
  if (d.blur > 0) parts.push(`blur ${d.blur}`);
  if (d.sideLight < 1) parts.push(`side light ${d.sideLight} from the ${d.litFrom}`);
  if (d.jpeg !== null) parts.push(`JPEG q${d.jpeg}`);
  return parts.length ? parts.join(', ') : 'clean';
}

/** The face `box` of `photo` as the degraded camera would have seen it: a new picture and the face's box in it. */
export async function degradeFace(photo: Photo, box: Rect, d: Degradation): Promise<{ photo: Photo; box: Rect }> {
  // Context around the face: 60 % of its width on each side, inside the picture.
  const pad = Math.round(box.width * 0.6);
  const x0 = Math.max(0, Math.floor(box.x - pad));
  const y0 = Math.max(0, Math.floor(box.y - pad));
  const x1 = Math.min(photo.rgb.width, Math.ceil(box.x + box.width + pad));
  const y1 = Math.min(photo.rgb.height, Math.ceil(box.y + box.height + pad));
  const scale = d.facePx === null ? 1 : Math.min(1, d.facePx / box.width);
  const width = Math.max(1, Math.round((x1 - x0) * scale));
  const height = Math.max(1, Math.round((y1 - y0) * scale));
  let img = sharp(Buffer.from(photo.rgb.data.buffer, photo.rgb.data.byteOffset, photo.rgb.data.length), {
    raw: { width: photo.rgb.width, height: photo.rgb.height, channels: 3 },
  })
    .extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 })
    .resize(width, height, { kernel: 'lanczos3' });
  if (d.blur >= 0.3) img = img.blur(d.blur);
  const raw = await img.raw().toBuffer();
  const pixels = new Uint8Array(raw.buffer, raw.byteOffset, raw.length);
  if (d.sideLight < 1) {
    for (let x = 0; x < width; x++) {
      const t = width > 1 ? x / (width - 1) : 0;
      const gain = 1 - (1 - d.sideLight) * (d.litFrom === 'left' ? t : 1 - t);
      for (let y = 0; y < height; y++) {
        const at = (y * width + x) * 3;
        for (let c = 0; c < 3; c++) pixels[at + c] = Math.round(pixels[at + c] * gain);
      }
    }
  }
  let data = pixels;
  if (d.jpeg !== null) {
    const jpeg = await sharp(Buffer.from(pixels.buffer, pixels.byteOffset, pixels.length), { raw: { width, height, channels: 3 } })
      .jpeg({ quality: d.jpeg, chromaSubsampling: '4:2:0' })
      .toBuffer();
    const back = await sharp(jpeg).removeAlpha().raw().toBuffer();
    data = new Uint8Array(back.buffer, back.byteOffset, back.length);
  }
  const rgb: RgbImage = { width, height, channels: 3, data };
  const out: Rect = {
    x: Math.round((box.x - x0) * scale),
    y: Math.round((box.y - y0) * scale),
    width: Math.max(1, Math.round(box.width * scale)),
    height: Math.max(1, Math.round(box.height * scale)),
  };
  return { photo: { rgb, gray: rgbToGray(rgb) }, box: out };
}
