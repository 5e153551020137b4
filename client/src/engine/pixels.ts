/**
 * Getting pixels for the engine the way the server gets them, so both see the same bytes: an image file is
 * decoded without colour management (the server's sharp pipeline keeps the file's sRGB values as they are)
 * and with its EXIF orientation applied (as the server's `.rotate()`); a camera frame is the canvas the
 * camera drew it into.
 *
 * Limits of "the same bytes": PNG is lossless, so a PNG decodes identically here and on the server. JPEG
 * decoders may round differently (libjpeg-turbo in both here, but not guaranteed elsewhere); images with
 * transparency lose the colour under fully transparent pixels in a canvas (the server keeps it).
 */

export interface DecodedRgba {
  data: Uint8ClampedArray;
  width: number;
  height: number;
}

/** Decodes an image file (Blob) to RGBA. */
export async function decodeImageFile(file: Blob): Promise<DecodedRgba> {
  const bitmap = await createImageBitmap(file, { colorSpaceConversion: 'none', premultiplyAlpha: 'none', imageOrientation: 'from-image' });
  try {
    const { width, height } = bitmap;
    const canvas = new OffscreenCanvas(width, height);
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) throw new Error('this browser cannot read image pixels (no 2D canvas)');
    ctx.drawImage(bitmap, 0, 0);
    const img = ctx.getImageData(0, 0, width, height);
    return { data: img.data, width, height };
  } finally {
    bitmap.close();
  }
}

/**
 * A canvas's exact pixels, read on the page: how a photo goes to the engine (its RGBA buffer is then moved to
 * the worker without a copy). Live camera frames skip this read: they go as ImageBitmaps (lib/analyze.ts).
 */
export function canvasPixels(canvas: HTMLCanvasElement): ImageData {
  return canvas.getContext('2d', { willReadFrequently: true })!.getImageData(0, 0, canvas.width, canvas.height);
}
