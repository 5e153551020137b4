/**
 * The people of the licensed test photos (test/fixtures/images, SOURCES.md), for the benchmarks that need the
 * same people seen again: LBPH across photos (lbph-robustness.bench.ts) and the second factor's false accepts and
 * rejects (second-factor.bench.ts). Haar boxes as haarcascade_frontalface_alt2 finds them with the product's
 * defaults; its false positives on these photos are left out.
 */
import type { Rect } from '../shared/image/types.js';

/** 19 different people: a photo in test/fixtures/images/faces and the box of the person's face in it. */
export const PEOPLE: readonly (readonly [string, Rect])[] = [
  ['astronaut.png', { x: 177, y: 66, width: 97, height: 97 }],
  ['grace_hopper.jpg', { x: 145, y: 99, width: 239, height: 239 }],
  ['messi5.jpg', { x: 225, y: 92, width: 41, height: 41 }],
  ['sample1.jpg', { x: 364, y: 363, width: 244, height: 244 }],
  ['sample2.jpg', { x: 889, y: 261, width: 198, height: 198 }],
  ['sample5.jpg', { x: 783, y: 122, width: 199, height: 199 }],
  ['sample5.jpg', { x: 354, y: 891, width: 244, height: 244 }],
  ['sample5.jpg', { x: 1089, y: 217, width: 187, height: 187 }],
  ['sample5.jpg', { x: 1359, y: 409, width: 244, height: 244 }],
  ['sample5.jpg', { x: 639, y: 454, width: 164, height: 164 }],
  ['sample3.jpg', { x: 1027, y: 225, width: 275, height: 275 }],
  ['sample3.jpg', { x: 1480, y: 314, width: 249, height: 249 }],
  ['sample3.jpg', { x: 556, y: 342, width: 239, height: 239 }],
  ['sample4.jpg', { x: 940, y: 205, width: 215, height: 215 }],
  ['sample4.jpg', { x: 251, y: 212, width: 240, height: 240 }],
  ['sample6.jpg', { x: 1445, y: 284, width: 267, height: 267 }],
  ['sample6.jpg', { x: 1155, y: 338, width: 236, height: 236 }],
  ['sample6.jpg', { x: 623, y: 356, width: 239, height: 239 }],
  ['sample6.jpg', { x: 243, y: 509, width: 258, height: 258 }],
];

/** The screenshot of Human's face-match demo: thumbnails of faces from many photos. */
export const FACEMATCH = 'human-facematch.jpg';

/**
 * The man's 19 thumbnails in FACEMATCH (top-left corners `x,y` of their Haar boxes with minNeighbors 3): 19
 * different photos of one person, confirmed by the embedding recognizer (distance under 0.45 to the first).
 */
export const MAN: readonly string[] = [
  '22,297',
  '127,298',
  '451,299',
  '554,300',
  '240,299',
  '343,297',
  '1082,303',
  '773,303',
  '877,302',
  '1515,298',
  '656,299',
  '988,296',
  '27,414',
  '1733,301',
  '1833,302',
  '1291,299',
  '1617,297',
  '1190,298',
  '1397,302',
];

/** Thumbnails whose identity is unclear (close to the man by the embedding): left out of both sides. */
export const UNCLEAR: ReadonlySet<string> = new Set(['121,411', '874,405', '339,405']);

/** The `x,y` key of a thumbnail's box. */
export const thumbKey = (b: Rect): string => `${b.x},${b.y}`;
