/**
 * Person labels: normalised as the original service did (trimmed, lower-case, spaces to `-`), and safe to use
 * as one path segment (`<DATA_DIR>/images/<label>/`). Shared so the browser validates exactly as the server.
 */

/** Longest label accepted, in characters (a folder name must stay well under file-system limits). */
export const MAX_LABEL_LENGTH = 64;

export type LabelCheck = { ok: true; label: string } | { ok: false; reason: string };

// Control characters (C0, DEL, C1) never belong in a name, and are refused rather than stripped.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Characters some file system or URL path treats specially.
const UNSAFE = /[/\\:*?"<>|%]/;

/** Normalises a raw label and says whether it is acceptable, and if not, why (in words for a person). */
export function normalizeLabel(raw: unknown): LabelCheck {
  if (typeof raw !== 'string') return { ok: false, reason: 'label must be a text value' };
  if (CONTROL.test(raw)) return { ok: false, reason: 'label must not contain control characters' };
  const label = raw.normalize('NFC').trim().toLowerCase().replace(/\s+/g, '-');
  if (label.length === 0) return { ok: false, reason: 'label must not be empty' };
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
