import type { GrayImage } from '../../shared/image/types.js';

/**
 * A 100x100 gray crop of fixed pseudo-random pixels (a linear congruential sequence from `seed`): its LBPH histogram
 * is counts over cells with about 4,000 of 16,384 bins set, as a real face crop's. The fixtures in
 * test/fixtures/features and test/fixtures/models were written from these crops by earlier versions.
 */
export function noiseCrop(seed: number): GrayImage {
  let s = seed;
  const data = new Uint8Array(100 * 100);
  for (let i = 0; i < data.length; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    data[i] = s >>> 24;
  }
  return { width: 100, height: 100, data };
}
