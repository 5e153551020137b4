/**
 * Getting pixels for the engine the way the server gets them, so both see the same bytes: an image file is
 * decoded without colour management (the server's sharp pipeline keeps the file's sRGB values as they are)
 * and with its EXIF orientation applied (as the server's `.rotate()`); a camera frame is grabbed as an
 * ImageBitmap, which the worker reads.
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

/** The video's current frame, for the engine (transferred to the worker, which closes it). */
export function grabFrame(video: HTMLVideoElement): Promise<ImageBitmap> {
  if (video.readyState < 2 || !video.videoWidth) return Promise.reject(new Error('the camera has no frame yet'));
  return createImageBitmap(video);
}
