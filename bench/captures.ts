/**
 * A person's training captures made from one photo, as a person at a camera would take them: re-encoded,
 * mirrored, a little brighter and a little darker (never the photo itself, so recognising the photo is a real
 * match and not a distance of 0, which LBPH's window 4..85 calls unknown). Used by the e2e tests and benches.
 */
import sharp from 'sharp';

export function captureVariations(original: Buffer): Promise<Buffer[]> {
  return Promise.all([
    sharp(original).jpeg({ quality: 92 }).toBuffer(),
    sharp(original).flop().jpeg({ quality: 92 }).toBuffer(),
    sharp(original).modulate({ brightness: 1.15 }).jpeg({ quality: 92 }).toBuffer(),
    sharp(original).modulate({ brightness: 0.85 }).jpeg({ quality: 92 }).toBuffer(),
  ]);
}
