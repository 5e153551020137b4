/**
 * Pixels as a worker receives them (protocol.ts FramePixels) to the RGBA image the engines take: RGBA bytes
 * are used in place; an ImageBitmap is read through one reused 2D canvas per worker and closed. Shared by the
 * engine worker and the object lanes (object-worker.ts), which need no grey image.
 */
import type { RgbImage } from '../../../shared/image/types';
import type { FramePixels } from './protocol';

let scratch: OffscreenCanvasRenderingContext2D | null = null;

export function readRgba(pixels: FramePixels): RgbImage {
  if (pixels.kind === 'rgba') {
    const { data, width, height } = pixels;
    return checked(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), width, height);
  }
  const { bitmap } = pixels;
  const { width, height } = bitmap;
  if (!scratch || scratch.canvas.width !== width || scratch.canvas.height !== height) {
    scratch = new OffscreenCanvas(width, height).getContext('2d', { willReadFrequently: true });
    if (!scratch) throw new Error('this browser cannot read pixels in a worker (no OffscreenCanvas 2D context)');
  }
  scratch.drawImage(bitmap, 0, 0);
  bitmap.close();
  const img = scratch.getImageData(0, 0, width, height);
  return checked(new Uint8Array(img.data.buffer), width, height);
}

function checked(data: Uint8Array, width: number, height: number): RgbImage {
  if (data.length < width * height * 4)
    throw new Error(`the image holds ${data.length} bytes; ${width}x${height} RGBA needs ${width * height * 4}`);
  return { width, height, channels: 4, data };
}
