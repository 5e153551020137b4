/**
 * Image inputs for the fuzzer: small real images made from the test photos (test/fixtures/images/) in every
 * accepted format, and mutations of their bytes (truncated, bytes flipped, bytes inserted or cut, declared
 * dimensions changed in the PNG, JPEG and GIF headers, trailing garbage), plus files that are not images.
 * Seeds are small (at most 160 px) so thousands of cases decode in seconds.
 */
import zlib from 'node:zlib';
import fc from 'fast-check';
import sharp from 'sharp';
import { readTestImage } from '../helpers/test-server.js';

export interface ImageSeed {
  name: string;
  bytes: Uint8Array;
}

/** Makes the seeds (once per run: a second or so). */
export async function imageSeeds(): Promise<ImageSeed[]> {
  const grace = await readTestImage('faces/grace_hopper.jpg');
  const messi = await readTestImage('faces/messi5.jpg');
  const coins = await readTestImage('negatives/coins.png');
  const chelsea = await readTestImage('objects/chelsea.png');
  const small = (input: Buffer, width: number) => sharp(input).resize({ width });
  const out: [string, Promise<Buffer>][] = [
    // Big enough for the cascade to find Grace's face (minSize 30), so recognition and training run for real.
    ['grace-160.jpg', small(grace, 160).jpeg({ quality: 85 }).toBuffer()],
    ['grace-120.png', small(grace, 120).png().toBuffer()],
    ['grace-progressive.jpg', small(grace, 140).jpeg({ progressive: true }).toBuffer()],
    ['grace-exif-rotated.jpg', small(grace, 100).jpeg().withMetadata({ orientation: 6 }).toBuffer()],
    ['grace-cmyk.jpg', small(grace, 80).toColourspace('cmyk').jpeg().toBuffer()],
    ['messi-128.webp', small(messi, 128).webp().toBuffer()],
    ['chelsea-96.jpg', small(chelsea, 96).jpeg().toBuffer()],
    ['chelsea-64.gif', small(chelsea, 64).gif().toBuffer()],
    ['coins-64-gray.png', small(coins, 64).greyscale().png().toBuffer()],
    ['coins-48-16bit.png', small(coins, 48).png().toColourspace('rgb16').toBuffer()],
    ['grace-alpha-64.png', small(grace, 64).ensureAlpha(0.5).png().toBuffer()],
    ['grace-32.tif', small(grace, 32).tiff().toBuffer()],
    ['grace-32.avif', small(grace, 32).avif().toBuffer()],
    [
      'pixel-1x1.png',
      sharp({ create: { width: 1, height: 1, channels: 3, background: '#f00' } })
        .png()
        .toBuffer(),
    ],
    [
      'pixel-1x1.jpg',
      sharp({ create: { width: 1, height: 1, channels: 3, background: '#0f0' } })
        .jpeg()
        .toBuffer(),
    ],
    [
      'line-1x300.png',
      sharp({ create: { width: 1, height: 300, channels: 3, background: '#00f' } })
        .png()
        .toBuffer(),
    ],
  ];
  const seeds: ImageSeed[] = [];
  for (const [name, bytes] of out) seeds.push({ name, bytes: new Uint8Array(await bytes) });
  // An animated GIF of two frames (the first frame is used).
  const frame = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#888' } })
    .raw()
    .toBuffer();
  const animated = await sharp(Buffer.concat([frame, frame]), { raw: { width: 16, height: 32, channels: 3 } })
    .gif({ loop: 0 })
    .toBuffer()
    .then((b) => sharp(b, { pages: -1 }).gif().toBuffer())
    .catch(() => null);
  if (animated) seeds.push({ name: 'animated.gif', bytes: new Uint8Array(animated) });
  return seeds;
}

const ascii = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));

/** Bytes that are not an accepted image: documents, archives, text, formats refused on purpose. */
export const NOT_IMAGES: ImageSeed[] = [
  { name: 'empty', bytes: new Uint8Array(0) },
  { name: 'svg', bytes: ascii('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64"/></svg>') },
  { name: 'svg-huge', bytes: ascii('<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="100000"/>') },
  { name: 'pdf', bytes: ascii('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF') },
  { name: 'html', bytes: ascii('<!doctype html><script>alert(1)</script>') },
  { name: 'zip', bytes: new Uint8Array([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 8, 0]) },
  { name: 'jpeg-soi-only', bytes: new Uint8Array([0xff, 0xd8, 0xff]) },
  { name: 'png-signature-only', bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  { name: 'gif-header-only', bytes: ascii('GIF89a\x10\x00\x10\x00') },
  { name: 'riff-webp-header', bytes: ascii('RIFF\x10\x00\x00\x00WEBPVP8 ') },
  { name: 'text', bytes: ascii('hello, I am a text file') },
  { name: 'bmp', bytes: ascii('BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00') },
];

/** A change to a seed's bytes, as data (printable, shrinkable). */
export type Mutation =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; flips: [number, number][] }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'cut'; at: number; length: number }
  | { kind: 'dimensions'; width: number; height: number; fixCrc: boolean }
  | { kind: 'append'; bytes: Uint8Array };

/** Declared sizes worth trying: zero, one, huge (past any pixel limit), overflow-prone, and plausible. */
const DIMENSION = fc.oneof(
  fc.constantFrom(0, 1, 2, 255, 256, 2000, 6000, 65_535, 65_536, 0x7fff_ffff, 0xffff_ffff),
  fc.integer({ min: 1, max: 3000 }),
);

export const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Mutation>({ kind: 'none' }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('flip' as const),
      flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), length: fc.integer({ min: 1, max: 512 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('dimensions' as const), width: DIMENSION, height: DIMENSION, fixCrc: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('append' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 256 }) }) },
);

const u32 = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint32(at, v >>> 0);
const u16be = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint16(at, v & 0xffff);
const u16le = (b: Uint8Array, at: number, v: number) => new DataView(b.buffer, b.byteOffset).setUint16(at, v & 0xffff, true);

/** Rewrites the size a header declares: PNG IHDR (and its CRC if asked), JPEG's frame header (SOFn), GIF's screen. */
function setDimensions(bytes: Uint8Array, width: number, height: number, fixCrc: boolean): Uint8Array {
  const b = bytes.slice();
  if (b[0] === 0x89 && b[1] === 0x50 && b.length >= 33) {
    u32(b, 16, width);
    u32(b, 20, height);
    if (fixCrc) u32(b, 29, zlib.crc32(b.subarray(12, 29)));
    return b;
  }
  if (b[0] === 0xff && b[1] === 0xd8) {
    for (let i = 2; i + 9 < b.length; i++) {
      // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC): height then width, 16-bit big-endian.
      if (b[i] === 0xff && b[i + 1] >= 0xc0 && b[i + 1] <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(b[i + 1])) {
        u16be(b, i + 5, height);
        u16be(b, i + 7, width);
        return b;
      }
    }
    return b;
  }
  if (b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b.length >= 10) {
    u16le(b, 6, width);
    u16le(b, 8, height);
  }
  return b;
}

export function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  const n = bytes.length;
  switch (m.kind) {
    case 'none':
      return bytes;
    case 'truncate':
      return bytes.slice(0, Math.floor(n * m.at));
    case 'flip': {
      const b = bytes.slice();
      if (n) for (const [at, xor] of m.flips) b[at % n] ^= xor;
      return b;
    }
    case 'insert': {
      const at = n ? m.at % n : 0;
      return new Uint8Array(Buffer.concat([bytes.subarray(0, at), m.bytes, bytes.subarray(at)]));
    }
    case 'cut': {
      const at = n ? m.at % n : 0;
      return new Uint8Array(Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + m.length)]));
    }
    case 'dimensions':
      return setDimensions(bytes, m.width, m.height, m.fixCrc);
    case 'append':
      return new Uint8Array(Buffer.concat([bytes, m.bytes]));
  }
}

export interface ImageCase {
  /** What it is, in words (`grace-160.jpg truncate@0.42`). */
  name: string;
  bytes: Uint8Array;
  /** Unchanged bytes of a real image: the service must accept it (a 200, or a documented refusal not about the image). */
  pristine: boolean;
}

function describeMutation(m: Mutation): string {
  switch (m.kind) {
    case 'none':
      return '';
    case 'truncate':
      return ` truncated@${m.at.toFixed(3)}`;
    case 'flip':
      return ` flipped ${m.flips.map(([a, x]) => `${a}^${x}`).join(',')}`;
    case 'insert':
      return ` +${m.bytes.length}B@${m.at}`;
    case 'cut':
      return ` -${m.length}B@${m.at}`;
    case 'dimensions':
      return ` declared ${m.width}x${m.height}${m.fixCrc ? ' (crc fixed)' : ''}`;
    case 'append':
      return ` +${m.bytes.length}B trailing`;
  }
}

/** An image case: a seed as it is or mutated (most), a file that is not an image, or random bytes. */
export function imageCase(seeds: ImageSeed[], pristineWeight = 3): fc.Arbitrary<ImageCase> {
  const seed = fc.constantFrom(...seeds);
  return fc.oneof(
    { weight: pristineWeight, arbitrary: seed.map((s) => ({ name: s.name, bytes: s.bytes, pristine: true })) },
    {
      weight: 10,
      arbitrary: fc
        .tuple(seed, mutation)
        .map(([s, m]) => ({ name: `${s.name}${describeMutation(m)}`, bytes: mutate(s.bytes, m), pristine: m.kind === 'none' })),
    },
    { weight: 2, arbitrary: fc.constantFrom(...NOT_IMAGES).map((s) => ({ name: s.name, bytes: s.bytes, pristine: false })) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((bytes) => ({ name: 'random bytes', bytes, pristine: false })) },
  );
}

/** How an image travels in a JSON field: base64 plain or as a data URL, well formed or not. */
export type ImageEncoding =
  | 'base64'
  | 'data-url'
  | 'data-url-wrong-type'
  | 'base64url'
  | 'whitespace'
  | 'no-padding'
  | 'bad-chars'
  | 'data-url-not-base64'
  | 'percent-data-url';

export const imageEncoding: fc.Arbitrary<ImageEncoding> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom<ImageEncoding>('base64', 'data-url') },
  {
    weight: 3,
    arbitrary: fc.constantFrom<ImageEncoding>(
      'data-url-wrong-type',
      'base64url',
      'whitespace',
      'no-padding',
      'bad-chars',
      'data-url-not-base64',
      'percent-data-url',
    ),
  },
);

/** The field's text; `lossless` when the server must read back exactly `bytes` from it. */
export function encodeImage(bytes: Uint8Array, encoding: ImageEncoding): { text: string; lossless: boolean } {
  const b64 = Buffer.from(bytes).toString('base64');
  switch (encoding) {
    case 'base64':
      return { text: b64, lossless: true };
    case 'data-url':
      return { text: `data:image/jpeg;base64,${b64}`, lossless: true };
    case 'data-url-wrong-type':
      return { text: `data:text/html;charset=utf-8;base64,${b64}`, lossless: true };
    case 'base64url':
      return { text: Buffer.from(bytes).toString('base64url'), lossless: true };
    case 'whitespace':
      return { text: ` ${b64.replace(/(.{76})/g, '$1\r\n')}\n`, lossless: true };
    case 'no-padding':
      return { text: b64.replace(/=+$/, ''), lossless: true };
    case 'bad-chars':
      return { text: `${b64.slice(0, 8)}!*${b64.slice(8)}`, lossless: false };
    case 'data-url-not-base64':
      return { text: `data:image/png,${encodeURIComponent(b64)}`, lossless: false };
    case 'percent-data-url':
      return { text: `data:image/png;base64,${encodeURIComponent(b64)}`, lossless: false };
  }
}
