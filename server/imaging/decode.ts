/**
 * Turning untrusted bytes into pixels. Every failure becomes an ApiError with a 4xx status, so a bad upload
 * can never surface as a 500. sharp (libvips) decodes; it refuses truncated files and images whose data ends
 * before their pixels do (a 265-byte JPEG can declare 6000x6000 and decode to grey), and it applies EXIF
 * orientation as OpenCV's imread does, so phone photos are upright.
 *
 * ImageDecoder is how the services decode: it reads the header, takes a lease of width x height pixels from the
 * pixel budget (server/imaging/pixel-budget.ts; 503 when it stays full), decodes, and gives the lease back when
 * the caller is done with the pixels.
 */
import sharp, { type Metadata, type OutputInfo } from 'sharp';
import type { GrayImage, RgbImage } from '../../shared/image/types.js';
import { rgbToGray } from '../../shared/image/ops.js';
import { ApiError } from '../http/errors.js';
import type { AcquireOptions, PixelBudget } from './pixel-budget.js';

// libvips' operation cache would keep recent decodes (up to 50 MB and 100 operations) for a repeat that never
// comes: every request brings other bytes. Off, so decoded pixels are freed with their request.
sharp.cache(false);

/** libvips' words for data that stopped before the image did (its warnings; other warnings are harmless). */
const INCOMPLETE = /premature end|truncat|corrupt jpeg data|not enough data|unexpected end|short read|read error/i;

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
    const { data, info } = await decodePixels(bytes, limits.maxPixels);
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
    const why = err instanceof Error ? err.message.replace(/^Vips\w*:\s*/i, '') : String(err);
    throw new ApiError('invalid_image', `the image could not be decoded whole (${why.split('\n')[0]})`);
  }
}

/**
 * The upright RGB pixels. Decoded strictly first (any libvips warning fails): a warning that the data ended early
 * refuses the image; another warning (an odd but complete file) decodes it again, leniently.
 */
async function decodePixels(bytes: Uint8Array, maxPixels: number): Promise<{ data: Buffer; info: OutputInfo }> {
  const run = (failOn: 'warning' | 'truncated') =>
    sharp(bytes, { failOn, limitInputPixels: maxPixels })
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
  try {
    return await run('warning');
  } catch (err) {
    if (err instanceof Error && INCOMPLETE.test(err.message)) throw err;
    return run('truncated');
  }
}

/** An image decoded under a lease of the pixel budget: `release()` when its pixels are no longer used. */
export interface AdmittedImage {
  image: DecodedImage;
  release(): void;
}

export class ImageDecoder {
  constructor(
    readonly limits: DecodeLimits,
    readonly budget: PixelBudget,
  ) {}

  /** Header, lease, decode; the caller releases. 400/413 for a bad or too large image, 503 when the budget stays full. */
  async admit(bytes: Uint8Array, options: AcquireOptions = {}): Promise<AdmittedImage> {
    const { width, height } = await probeImage(bytes, this.limits);
    const lease = await this.budget.acquire(width * height, options);
    try {
      return { image: await decodeImage(bytes, this.limits), release: () => lease.release() };
    } catch (err) {
      lease.release();
      throw err;
    }
  }

  /** Decodes, runs `work` on the pixels, and gives the lease back when it is done (or failed). */
  async use<T>(bytes: Uint8Array, work: (image: DecodedImage) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const { image, release } = await this.admit(bytes, options);
    try {
      return await work(image);
    } finally {
      release();
    }
  }
}
