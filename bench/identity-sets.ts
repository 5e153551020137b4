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

/**
 * Open-set benchmark (open-set.bench.ts): the other people seen in more than one photo among FACEMATCH's
 * thumbnails, found by clustering (face-api's 128-d and Human's faceres descriptors agree: each pair is the other's
 * nearest or second nearest face under both, same-moment crops aside) and confirmed by eye on contact sheets of
 * the crops. Each thumbnail comes from a different photo (different background, clothes or light). Pairs that
 * looked alike but were not sure are in MAYBE_SAME instead. Keys as in MAN.
 */
export const MULTI_PHOTO: Readonly<Record<string, readonly string[]>> = {
  man: MAN,
  'woman-a': ['1816,630', '549,747'],
  'woman-b': ['1819,410', '1720,749', '122,522', '229,746'],
  /** Same pose in both: possibly two shots taken moments apart. */
  'woman-c': ['236,637', '771,860'],
  'man-d': ['557,524', '660,520'],
  'man-e': ['976,855', '1295,743'],
  'woman-f': ['1516,526', '1298,413'],
};

/**
 * Thumbnails that may show one person twice (descriptors near, the eye unsure; three are renders of one
 * computer-generated face): never enrolled, only shown as strangers, so no name among them can be a true one.
 */
export const MAYBE_SAME: ReadonlySet<string> = new Set([
  ...['872,863', '1396,862'],
  ...['1090,853', '774,747'],
  // Renders of one computer-generated face.
  ...['354,856', '1296,858', '6,745'],
]);

/**
 * Thumbnails that may be one of MULTI_PHOTO's people (near them under both descriptors, too blurred or too
 * changed to tell): left out of both sides, like UNCLEAR.
 */
export const MAYBE_KNOWN: ReadonlySet<string> = new Set([
  // Near woman-c, but blonde where she is dark.
  '451,748',
  // Blurred; near woman-b, and near each other.
  ...['979,412', '1524,421'],
]);
