/**
 * Realistic LBPH histograms and descriptors for the compact model's tests and size figures: the histograms are
 * lbpHistogram of the OpenCV LBPH fixture's 100 x 100 face crops (test/fixtures/opencv/lbph, the product's
 * FACE_SIZE) moved by a few pixels, mirrored, brightened or darkened and given a little noise, so each sample is a
 * distinct capture with a real face's sparsity; the descriptors are unit-length 128-d vectors around a per-person
 * centre (face-api's descriptors sit around 0.4 to 0.6 apart for one person).
 */
import type { GrayImage } from '../image/types.js';
import { lbpHistogram } from '../lbph/lbph.js';

/** A crop moved by (dx, dy) (edges repeated), optionally mirrored, with brightness `gain` and noise. */
export function jitteredCrop(img: GrayImage, random: () => number): GrayImage {
  const { width: w, height: h, data } = img;
  const dx = Math.floor(random() * 7) - 3;
  const dy = Math.floor(random() * 7) - 3;
  const flip = random() < 0.5;
  const gain = 0.8 + random() * 0.4;
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const sy = Math.min(h - 1, Math.max(0, y + dy));
    for (let x = 0; x < w; x++) {
      let sx = Math.min(w - 1, Math.max(0, x + dx));
      if (flip) sx = w - 1 - sx;
      const v = data[sy * w + sx] * gain + (random() - 0.5) * 6;
      out[y * w + x] = Math.max(0, Math.min(255, Math.round(v)));
    }
  }
  return { width: w, height: h, data: out };
}

/** `n` histograms from jittered copies of `crops`, round robin. */
export function realisticHistograms(crops: readonly GrayImage[], n: number, random: () => number): Float32Array[] {
  return Array.from({ length: n }, (_, i) => lbpHistogram(jitteredCrop(crops[i % crops.length], random)));
}

/** `people` x `perPerson` unit-length descriptors of `dim` values, each person's spread around their centre. */
export function realisticDescriptors(people: number, perPerson: number, dim: number, random: () => number): Float32Array {
  const out = new Float32Array(people * perPerson * dim);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  for (let p = 0; p < people; p++) {
    const centre = Array.from({ length: dim }, gauss);
    for (let s = 0; s < perPerson; s++) {
      const v = centre.map((c) => c + gauss() * 0.35);
      const norm = Math.hypot(...v);
      out.set(
        v.map((x) => x / norm),
        (p * perPerson + s) * dim,
      );
    }
  }
  return out;
}
