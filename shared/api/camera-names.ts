/**
 * Camera and device names (#35): the `camera` of POST /api/recognize, kept with the sightings (faces are tracked per
 * camera), and the `source` of POST /api/results, the device a result came from. They are shown in lists and
 * filtered on, so they follow rules like a label's (./labels.ts): Unicode NFC, trimmed, at most 64 characters,
 * something visible, and nothing that changes how the text around them reads (control characters such as newlines,
 * bidirectional controls, invisible or format characters), no markup (`<`, `>`), and no U+FFFD or lone surrogate
 * (bytes that were not UTF-8). Case and spaces are kept: a camera name is a name, not a folder.
 */
import { z } from 'zod';
import { BIDI_CONTROL, CONTROL, IGNORABLE, LONE_SURROGATE, REPLACEMENT } from './labels.js';

/** Longest camera or device name accepted, in characters. */
export const MAX_CAMERA_NAME_LENGTH = 64;

// Only invisible characters (white space, combining marks, the blank Braille pattern): no name at all.
const INVISIBLE_ONLY = /^[\p{White_Space}\p{Mn}\p{Me}\u2800]*$/u;
const MARKUP = /[<>]/;

/** Why a camera or device name (already NFC and trimmed) is refused, in words; null when it is acceptable. */
export function cameraNameProblem(name: string): string | null {
  if (LONE_SURROGATE.test(name) || REPLACEMENT.test(name)) return 'must be valid Unicode text (send the name as UTF-8)';
  if (name.length === 0) return 'must not be empty';
  if (CONTROL.test(name)) return 'must not contain control characters (newlines, tabs, ...)';
  if (BIDI_CONTROL.test(name)) return 'must not contain bidirectional control characters';
  if (IGNORABLE.test(name)) return 'must not contain invisible or format characters (zero-width spaces or joiners, ...)';
  if (INVISIBLE_ONLY.test(name)) return 'must contain a visible character';
  if (MARKUP.test(name)) return 'must not contain < or >';
  if (name.length > MAX_CAMERA_NAME_LENGTH) return `must be at most ${MAX_CAMERA_NAME_LENGTH} characters`;
  return null;
}

/** A camera or device name: normalised to NFC and trimmed, then checked (cameraNameProblem). */
export const cameraName = z
  .string({ error: 'must be text' })
  .overwrite((raw) => raw.normalize('NFC').trim())
  .superRefine((name, ctx) => {
    const problem = cameraNameProblem(name);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
