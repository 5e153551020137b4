/** Turning canvases, files and blobs into what the API takes (base64 JPEG) and back into pixels. */

export const JPEG_QUALITY = 0.9;

export function canvasToBlob(canvas: HTMLCanvasElement, type = 'image/jpeg', quality = JPEG_QUALITY): Promise<Blob> {
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('the browser could not encode the image'))), type, quality),
  );
}

/** A data URL (the API accepts data URLs and plain base64 alike). */
export function canvasToDataUrl(canvas: HTMLCanvasElement, quality = JPEG_QUALITY): string {
  return canvas.toDataURL('image/jpeg', quality);
}

export function blobToDataUrl(blob: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as string);
    reader.onerror = () => reject(reader.error ?? new Error('the file could not be read'));
    reader.readAsDataURL(blob);
  });
}

/** Draws an uploaded photo onto a canvas at its own size; rejects with a readable message when it is not an image. */
export async function fileToCanvas(file: Blob, canvas: HTMLCanvasElement = document.createElement('canvas')): Promise<HTMLCanvasElement> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    throw new Error('That file is not an image this browser can open. Choose a JPEG, PNG or WebP photo.');
  }
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext('2d')!.drawImage(bitmap, 0, 0);
  bitmap.close();
  return canvas;
}

/** The canvas itself when its longest side is at most `maxSide`, else a scaled-down copy (aspect ratio kept). */
export function fitWithin(canvas: HTMLCanvasElement, maxSide: number): HTMLCanvasElement {
  const scale = maxSide / Math.max(canvas.width, canvas.height);
  if (scale >= 1) return canvas;
  const out = document.createElement('canvas');
  out.width = Math.max(1, Math.round(canvas.width * scale));
  out.height = Math.max(1, Math.round(canvas.height * scale));
  const ctx = out.getContext('2d')!;
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(canvas, 0, 0, out.width, out.height);
  return out;
}
