/**
 * A sighting's crop (sighting-recorder.ts): the face box widened by CROP_MARGIN each side, its pixels copied out
 * of the recognition's decoded image while the request holds it, and the JPEG made from that copy later.
 */
import sharp from 'sharp';
import type { RgbImage } from '../../shared/image/types.js';
import type { SightingBox } from './sighting-store.js';

/** Each side of the face box is widened by this share of its size. */
export const CROP_MARGIN = 0.4;
/** The crop's longest side, at most. */
export const CROP_MAX_SIDE = 160;
/** The copy of a crop's pixels kept until it is stored: longest side at most this (the descriptor wants the face at 150 px or more). */
export const COPY_MAX_SIDE = 2 * CROP_MAX_SIDE;

/** A face's crop pixels, copied out of its decoded image (copyFace). */
export interface FacePixels {
  /** The crop region, at most COPY_MAX_SIDE a side (3 channels). */
  rgb: RgbImage;
  /** The face box within `rgb`. */
  box: SightingBox;
  /** The stored JPEG's size: the crop region's at most CROP_MAX_SIDE a side. */
  jpeg: { width: number; height: number };
}

/** The face box widened by CROP_MARGIN each side, within the image; null when nothing of it is inside. */
export function cropRegion(
  box: SightingBox,
  width: number,
  height: number,
): { left: number; top: number; width: number; height: number } | null {
  const left = Math.max(0, Math.floor(box.x - box.w * CROP_MARGIN));
  const top = Math.max(0, Math.floor(box.y - box.h * CROP_MARGIN));
  const right = Math.min(width, Math.ceil(box.x + box.w * (1 + CROP_MARGIN)));
  const bottom = Math.min(height, Math.ceil(box.y + box.h * (1 + CROP_MARGIN)));
  if (right - left < 1 || bottom - top < 1) return null;
  return { left, top, width: right - left, height: bottom - top };
}

/** A width and height within `max` a side, the aspect kept (never enlarged). */
function fitInside(width: number, height: number, max: number): { width: number; height: number } {
  const scale = Math.min(1, max / Math.max(width, height));
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}

/**
 * Copies a face's crop region (cropRegion) out of a decoded image, at most COPY_MAX_SIDE a side: each pixel of the
 * copy the mean of up to 4 x 4 samples of its area. Synchronous and small (at most 300 KB, whatever the image), so
 * it is made while the request still holds the image, and the image is never needed again. Null when nothing of
 * the box is inside the image.
 */
export function copyFace(image: RgbImage, box: SightingBox): FacePixels | null {
  const ch = image.channels;
  if (!(image.width > 0 && image.height > 0) || image.data.length < image.width * image.height * ch) {
    throw new Error(`the decoded image's pixels do not match its size (${image.width}x${image.height}x${ch})`);
  }
  const region = cropRegion(box, image.width, image.height);
  if (!region) return null;
  const { width, height } = fitInside(region.width, region.height, COPY_MAX_SIDE);
  const sx = region.width / width;
  const sy = region.height / height;
  const taps = Math.min(4, Math.ceil(Math.max(sx, sy)));
  const n = taps * taps;
  const src = image.data;
  const out = new Uint8Array(width * height * 3);
  for (let y = 0, o = 0; y < height; y++) {
    for (let x = 0; x < width; x++, o += 3) {
      let r = 0;
      let g = 0;
      let b = 0;
      for (let ty = 0; ty < taps; ty++) {
        const py = region.top + Math.min(region.height - 1, Math.floor((y + (ty + 0.5) / taps) * sy));
        for (let tx = 0; tx < taps; tx++) {
          const px = region.left + Math.min(region.width - 1, Math.floor((x + (tx + 0.5) / taps) * sx));
          const i = (py * image.width + px) * ch;
          r += src[i];
          g += src[i + 1];
          b += src[i + 2];
        }
      }
      out[o] = Math.round(r / n);
      out[o + 1] = Math.round(g / n);
      out[o + 2] = Math.round(b / n);
    }
  }
  return {
    rgb: { width, height, channels: 3, data: out },
    box: { x: (box.x - region.left) / sx, y: (box.y - region.top) / sy, w: box.w / sx, h: box.h / sy },
    jpeg: fitInside(region.width, region.height, CROP_MAX_SIDE),
  };
}

export const toJpeg = (pixels: FacePixels) =>
  sharp(pixels.rgb.data, { raw: { width: pixels.rgb.width, height: pixels.rgb.height, channels: 3 } })
    .resize({ ...pixels.jpeg, fit: 'fill' })
    .jpeg({ quality: 85 })
    .toBuffer();
