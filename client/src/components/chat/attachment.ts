/**
 * Turning a chosen file or a camera frame into a photo to send. Large phone photos are scaled down first: the
 * analysis does not need 12 megapixels, and a smaller upload stays well under the server's body limit.
 */
import { canvasToDataUrl, fileToCanvas, fitWithin } from '../../lib/images';
import type { Attachment } from './conversation';

/** Longest side of a photo sent with a question, in pixels. */
export const MAX_SIDE = 1600;

function fromCanvas(canvas: HTMLCanvasElement, source: Attachment['source'], name?: string): Attachment {
  const c = fitWithin(canvas, MAX_SIDE);
  return { dataUrl: canvasToDataUrl(c), width: c.width, height: c.height, source, name };
}

/** Rejects with a sentence a person can read when the file is not an image. */
export async function attachmentFromFile(file: File): Promise<Attachment> {
  return fromCanvas(await fileToCanvas(file), 'file', file.name);
}

export function attachmentFromFrame(canvas: HTMLCanvasElement): Attachment {
  return fromCanvas(canvas, 'camera');
}
