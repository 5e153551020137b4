/**
 * Pictures sent by the enrollment and face pages: base64 JPEG or PNG, plain or as a data URL (what a canvas's
 * `toDataURL` gives). Anything else is refused before the backend sees it.
 */
export interface Capture {
  bytes: Buffer;
  type: 'image/jpeg' | 'image/png';
}

/** Largest picture taken, decoded: a 640x480 camera frame is ~50 KB as JPEG; 1920x1080 PNG stays under this. */
export const MAX_CAPTURE_BYTES = 4 * 1024 * 1024;

export function decodeCapture(text: string): Capture | null {
  const match = /^(?:data:image\/(?:jpeg|png);base64,)?([A-Za-z0-9+/]+={0,2})$/.exec(text.trim());
  if (!match || match[1].length > Math.ceil((MAX_CAPTURE_BYTES * 4) / 3) + 4) return null;
  const bytes = Buffer.from(match[1], 'base64');
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return { bytes, type: 'image/jpeg' };
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return { bytes, type: 'image/png' };
  return null;
}
