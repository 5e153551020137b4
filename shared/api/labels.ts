/**
 * Person labels: normalised as the original service did (trimmed, lower-case, spaces to `-`), and safe to use
 * as one path segment (`<DATA_DIR>/images/<label>/`). Shared so the browser validates exactly as the server.
 *
 * One name, one folder: the text is put in Unicode NFC first (so `e` + combining acute and the precomposed `é`
 * are one name), every rule then runs on that, and NFC is applied again after lower-casing, because lower-casing
 * can leave a string that NFC composes further (`T` + U+0308 lower-cases to `t` + U+0308, which NFC makes the
 * precomposed U+1E97). The result is stable: normalising a label gives the label itself.
 *
 * Case: two names are one label when their lower-case forms (Unicode's default, locale-independent mapping) are
 * equal: `Anna`/`ANNA`, `STRAẞE`/`Straße`, `T̈`/`ẗ`. Full case folding is not applied: it would store every `ß`
 * as `ss` and every final `ς` as `σ`, changing the name a person typed, so `STRASSE` and `straße` stay two labels
 * (as `Masse` and `Maße` are two words).
 */

/** Longest label accepted, in characters (a folder name must stay well under file-system limits). */
export const MAX_LABEL_LENGTH = 64;

export type LabelCheck = { ok: true; label: string } | { ok: false; reason: string };

// Control characters (C0, DEL, C1) never belong in a name, and are refused rather than stripped.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
export const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Half of a UTF-16 surrogate pair on its own is not text: a file system would store U+FFFD instead.
export const LONE_SURROGATE = /[\ud800-\udfff]/u;
// Bidirectional controls reorder what is shown around them, so one label could look like another.
export const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// Default-ignorable code points (zero-width spaces and joiners, variation selectors, tags, soft hyphens, Hangul
// fillers, ...) and format characters show nothing, so `a<U+200D>b` would look like `ab` and be a second label
// beside it (#28): refused anywhere in a label, as bidi controls are. This also refuses the ZWNJ of Persian
// spellings and emoji ZWJ sequences; a name can be written without them.
export const IGNORABLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}]/u;
// The replacement character stands for bytes a decoder could not read (a multipart part or a body that is not
// UTF-8, an encoded lone surrogate among them, #35): refused as the surrogate itself is, never stored as a name.
export const REPLACEMENT = /\ufffd/;
// The blank Braille pattern shows nothing, yet is neither white space nor ignorable: `alice` + U+2800 would look
// like `alice` (#35).
const BLANK = /\u2800/;
// Marks drawn over or around a letter (Unicode's overlay combining class 1: strokes, slashes, tildes through it;
// and the enclosing marks) make `a̶lice` a second label that reads as a struck-through `alice` (#35).
const OVERLAY =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: each mark is matched on its own, wherever it stands
  /[\u0334-\u0338\u1cd4\u1ce2-\u1ce8\u20d2\u20d3\u20d8-\u20da\u20e5\u20e6\u20ea\u20eb\u{10a39}\u{16af0}-\u{16af4}\u{1bc9e}\u{1d167}-\u{1d169}\p{Me}]/u;
// Characters that show nothing on their own: white space, combining marks and the blank Braille pattern. A label
// needs at least one character that is not one of these.
const INVISIBLE = /^[\p{White_Space}\p{Mn}\p{Me}\u2800]*$/u;
// Characters some file system or URL path treats specially.
const UNSAFE = /[/\\:*?"<>|%]/;

/** Normalises a raw label and says whether it is acceptable, and if not, why (in words for a person). */
export function normalizeLabel(raw: unknown): LabelCheck {
  if (typeof raw !== 'string') return { ok: false, reason: 'label must be a text value' };
  if (CONTROL.test(raw)) return { ok: false, reason: 'label must not contain control characters' };
  if (LONE_SURROGATE.test(raw)) return { ok: false, reason: 'label must be valid Unicode text (it holds half of a surrogate pair)' };
  if (REPLACEMENT.test(raw))
    return { ok: false, reason: 'label must be valid Unicode text (U+FFFD stands for bytes that were not UTF-8; send the name as UTF-8)' };
  const nfc = raw.normalize('NFC');
  if (BIDI_CONTROL.test(nfc)) return { ok: false, reason: 'label must not contain bidirectional control characters' };
  const trimmed = nfc.trim();
  if (trimmed.length === 0) return { ok: false, reason: 'label must not be empty' };
  if (IGNORABLE.test(trimmed))
    return {
      ok: false,
      reason: 'label must not contain invisible or format characters (zero-width joiners or spaces, tags, soft hyphens, ...)',
    };
  if (INVISIBLE.test(trimmed)) return { ok: false, reason: 'label must contain a visible character' };
  if (BLANK.test(trimmed)) return { ok: false, reason: 'label must not contain the blank Braille pattern (U+2800)' };
  if (OVERLAY.test(trimmed))
    return { ok: false, reason: 'label must not contain overlay or enclosing marks (a stroke, slash or circle over a letter)' };
  const label = trimmed.toLowerCase().normalize('NFC').replace(/\s+/g, '-');
  if (label.length > MAX_LABEL_LENGTH) {
    return { ok: false, reason: `label must be at most ${MAX_LABEL_LENGTH} characters` };
  }
  if (UNSAFE.test(label)) return { ok: false, reason: 'label must not contain / \\ : * ? " < > | or %' };
  if (label.includes('..') || label.startsWith('.')) {
    return { ok: false, reason: 'label must not start with "." or contain ".."' };
  }
  if (label === 'unknown') return { ok: false, reason: '"unknown" is reserved for faces that are not recognised' };
  return { ok: true, label };
}
