/**
 * Person labels for the fuzzer: plain names, and the Unicode and path edge cases a label meets on its way to a
 * folder name (NFC/NFD forms, bidi controls, zero-width and invisible characters, case mappings that change
 * length, `..`, separators and their look-alikes, the reserved `unknown`, lengths around the limit).
 */
import fc from 'fast-check';
import { MAX_LABEL_LENGTH } from '../../shared/api/labels.js';

/** Names that should be stored (a small pool, so uploads meet labels that exist). */
export const PLAIN_LABELS = ['alice', 'Grace Hopper', 'bob-smith', 'Zoë', 'José', 'Łukasz', '李雷', 'محمد', 'ada_lovelace', 'x'];

/** Pieces known to trip normalisation, validation or path handling. */
export const EDGE_PIECES = [
  // Canonical equivalence: NFD vs NFC, the "T\u0308", Hangul jamo, a compatibility ligature.
  'T\u0308',
  'J\u030c',
  'e\u0301',
  '\u00e9',
  '\u1100\u1161',
  '\ufb01',
  'Å',
  'A\u030a',
  // Case mappings that change length or meaning.
  'İ',
  'ß',
  'ẞ',
  'ΣΑΣ',
  'ǅ',
  'K', // Kelvin sign, lower-cases to k
  // Invisible and bidi characters.
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u202e',
  '\u202d',
  '\u2066',
  '\u2069',
  '\u200f',
  '\u061c',
  '\u034f',
  // Spaces and separators beyond ASCII.
  '\u00a0',
  '\u3000',
  '\u2028',
  '\u2029',
  '\u0085',
  ' ',
  '\t',
  // Path pieces and their look-alikes.
  '..',
  '.',
  '/',
  '\\',
  '%2e%2e',
  '%2f',
  '\u2215',
  '\uff0f',
  '\u2024\u2024',
  '~',
  ':',
  '*',
  '?',
  '<',
  '|',
  '"',
  '\u0000',
  '\u001b[31m',
  '\u007f',
  // Surrogates: a lone half (invalid UTF-16) and an emoji sequence.
  '\ud800',
  '\udc00',
  '👩‍👩‍👧',
  '🏳️‍🌈',
  // Reserved and special names.
  'unknown',
  'UNKNOWN',
  'Unknown',
  'CON',
  'nul',
  '$HOME',
  '\u0024{x}', // ${x}
  '`id`',
  "'; DROP TABLE x; --",
  '-rf',
  '__proto__',
  'constructor',
];

/** Whole labels around the length limit, in characters and in UTF-16 units. */
const LENGTHS = fc.constantFrom(
  'a'.repeat(MAX_LABEL_LENGTH),
  'a'.repeat(MAX_LABEL_LENGTH + 1),
  'é'.repeat(MAX_LABEL_LENGTH),
  'e\u0301'.repeat(MAX_LABEL_LENGTH / 2),
  'e\u0301'.repeat(MAX_LABEL_LENGTH),
  '😀'.repeat(MAX_LABEL_LENGTH / 2),
  '😀'.repeat(MAX_LABEL_LENGTH),
  'İ'.repeat(MAX_LABEL_LENGTH),
  `${' '.repeat(200)}a`,
  'a'.repeat(10_000),
);

/** A label as a client might send it. */
export const labelText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...PLAIN_LABELS) },
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_PIECES) },
  {
    weight: 6,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom(...PLAIN_LABELS), fc.constantFrom(...EDGE_PIECES)), { minLength: 1, maxLength: 4 })
      .map((parts) => parts.join('')),
  },
  { weight: 1, arbitrary: LENGTHS },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

/** A label field's JSON value: usually text, sometimes another type. */
export const labelValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: labelText },
  { weight: 1, arbitrary: fc.constantFrom(null, 0, 1, true, [], {}, ['alice'], { label: 'alice' }) },
);
