/**
 * Turning untrusted bytes into pixels. Every failure becomes an ApiError with a 4xx status, so a bad upload
 * can never surface as a 500. sharp (libvips) decodes; it refuses truncated files, and it applies EXIF
 * orientation as OpenCV's imread does, so phone photos are upright.
 */
import sharp, { type Metadata } from 'sharp';
import type { GrayImage, RgbImage } from '../../shared/image/types.js';
import { rgbToGray } from '../../shared/image/ops.js';
import { ApiError } from '../http/errors.js';

/** Formats accepted for face images. SVG and PDF are refused on purpose: they are documents, not photos. */
const ACCEPTED_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'avif', 'heif']);

const DATA_URL = /^data:([a-z]+\/[a-z0-9.+-]+)?(;[a-z0-9-]+=[^;,]*)*;base64,/i;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decodes plain base64 or a `data:...;base64,` URL; rejects anything that is not base64 with 400. */
export function decodeBase64Image(text: string): Uint8Array {
  let payload = text.trim();
  const prefix = DATA_URL.exec(payload);
  if (prefix) payload = payload.slice(prefix[0].length);
  else if (payload.startsWith('data:')) {
    throw new ApiError('invalid_image', 'the data URL must be base64-encoded ("data:image/jpeg;base64,...")');
  }
  payload = payload.replace(/\s+/g, '');
  if (payload.length === 0) throw new ApiError('invalid_image', 'the image is empty');
  if (!BASE64.test(payload) || payload.length % 4 === 1) {
    throw new ApiError('invalid_image', 'the image is not valid base64');
  }
  const bytes = Buffer.from(payload, payload.includes('-') || payload.includes('_') ? 'base64url' : 'base64');
  if (bytes.length === 0) throw new ApiError('invalid_image', 'the image is empty');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
}

export interface DecodedImage {
  format: string;
  rgb: RgbImage;
  gray: GrayImage;
}

export interface DecodeLimits {
  maxPixels: number;
}

/** Checks the header only: the format and size, without decoding the pixels. */
export async function probeImage(bytes: Uint8Array, limits: DecodeLimits): Promise<{ format: string; width: number; height: number }> {
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new ApiError('invalid_image', 'the file is not an image in a supported format (JPEG, PNG, WebP, GIF, TIFF, AVIF, HEIF)');
  }
  const format = meta.format ?? 'unknown';
  if (!ACCEPTED_FORMATS.has(format)) {
    throw new ApiError('invalid_image', `images in ${format} format are not accepted; send JPEG, PNG or WebP`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (width <= 0 || height <= 0) throw new ApiError('invalid_image', 'the image has no pixels');
  if (width * height > limits.maxPixels) {
    throw new ApiError('image_too_large', `the image is ${width}x${height} pixels; at most ${limits.maxPixels} pixels are accepted`);
  }
  return { format, width, height };
}

/** Decodes a whole image (first frame of an animation) to RGB, and OpenCV-equivalent grayscale on first use. */
export async function decodeImage(bytes: Uint8Array, limits: DecodeLimits): Promise<DecodedImage> {
  const { format } = await probeImage(bytes, limits);
  try {
    const { data, info } = await sharp(bytes, { failOn: 'truncated', limitInputPixels: limits.maxPixels })
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
    const rgb: RgbImage = {
      width: info.width,
      height: info.height,
      channels: 3,
      data: new Uint8Array(data.buffer, data.byteOffset, data.length),
    };
    // Grayscale only when asked for: the face engines want it, object detection and PPE checks do not.
    let gray: GrayImage | undefined;
    return {
      format,
      rgb,
      get gray() {
        gray ??= rgbToGray(rgb);
        return gray;
      },
    };
  } catch (err) {
    const why = err instanceof Error ? err.message.replace(/^Vips\w*:\s*/, '') : String(err);
    throw new ApiError('invalid_image', `the image could not be decoded (${why.split('\n')[0]})`);
  }
}
