/**
 * A training photo checked before it is saved (`POST /api/images/check`: nothing is stored): how many faces, how
 * big, how sharp, how lit, how frontal, and one verdict. Here the verdict becomes the few words a person reads on
 * the photo ("no face", "two faces: pick one", "too small", "blurred") and whether the photo is held back from
 * Save until they decide (a photo without a face teaches nothing; with several, the person must say which).
 */
/** A face's box in the checked image's pixels. */
export interface ShownFaceBox {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type PhotoVerdict = 'ok' | 'no_face' | 'several_faces' | 'too_small' | 'blurred' | 'too_dark' | 'too_bright' | 'not_frontal';

/** What the page keeps of a check: the verdict, the server's own sentence, and the faces it found. */
export interface PhotoCheckResult {
  verdict: PhotoVerdict;
  /** The server's explanation, when it gives one ("The face is 40 px wide; 80 px or more recognises better."). */
  detail: string;
  faces: ShownFaceBox[];
  /** The detection engine that found the faces, when the server says (a server check does; the browser's does not). */
  method?: 'local' | 'remote';
  /** The server's sentence when it could not use the selected engine (remote selected but down: local checked). */
  note?: string;
  /** The measured face's width in pixels, when the server says. */
  facePx?: number;
}

const COUNT_WORDS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

function countWord(n: number): string {
  return COUNT_WORDS[n] ?? String(n);
}

/** The verdict in a few words, as shown on the photo. `picked`: the person has chosen one of several faces. */
export function verdictText(check: PhotoCheckResult, picked: boolean): string {
  switch (check.verdict) {
    case 'ok':
      // The picked face's own check (captures.ts): good, and one of several.
      if (picked && check.faces.length > 1) return `Face picked (of ${countWord(check.faces.length)})`;
      return 'Good photo';
    case 'no_face':
      return 'No face';
    case 'several_faces':
      if (picked) return check.faces.length > 1 ? `Face picked (of ${countWord(check.faces.length)})` : 'Face picked';
      return check.faces.length > 1 ? `${capital(countWord(check.faces.length))} faces: pick one` : 'Several faces: pick one';
    case 'too_small':
      return 'Too small';
    case 'blurred':
      return 'Blurred';
    case 'too_dark':
      return 'Too dark';
    case 'too_bright':
      return 'Too bright';
    case 'not_frontal':
      return 'Not facing the camera';
  }
}

/** The chip's colour: green good, amber usable with a flaw, red held back until the person decides. */
export function verdictTone(check: PhotoCheckResult, picked: boolean): 'ok' | 'warn' | 'error' {
  if (check.verdict === 'ok' || (check.verdict === 'several_faces' && picked)) return 'ok';
  if (check.verdict === 'no_face' || check.verdict === 'several_faces') return 'error';
  return 'warn';
}

/** Whether the photo counts towards the person's good photos. */
export function isGood(check: PhotoCheckResult | undefined, picked: boolean): boolean {
  return check?.verdict === 'ok' || (check?.verdict === 'several_faces' && picked);
}

/** Where a photo came from: the camera on this page, or a file (an upload): the advice speaks of what fits. */
export type PhotoSource = 'camera' | 'file';

/**
 * What to do about it, in a sentence, for a photo from the camera (take it again, better) or from a file (choose
 * another: nobody can hold an uploaded photo's camera still).
 */
export function adviceFor(check: PhotoCheckResult, picked: boolean, source: PhotoSource = 'camera'): string {
  const file = source === 'file';
  switch (check.verdict) {
    case 'ok':
      return '';
    case 'no_face':
      return 'No face was found, so this photo would teach Lookout nothing. Remove it, or keep it anyway.';
    case 'several_faces':
      return picked ? 'Only the face you picked is saved.' : 'Pick the face of this person: only that face is saved.';
    case 'too_small': {
      const size = check.facePx ? `The face is ${check.facePx} px wide; 80 px or more recognises well` : 'The face is small in this photo';
      return file ? `${size}: choose a photo taken closer.` : `${size}: come closer to the camera.`;
    }
    case 'blurred':
      return file ? 'The face is blurred in this photo: choose a sharper one.' : 'The face is blurred: hold still, or take it again.';
    case 'too_dark':
      return file ? 'The face is dark in this photo: choose a brighter one.' : 'The face is dark: add light in front of the person.';
    case 'too_bright':
      return file
        ? 'The face is washed out in this photo: choose one without bright light on it.'
        : 'The face is washed out: move away from bright light.';
    case 'not_frontal':
      return 'The face is turned away: a little turn is good, this much is not.';
  }
}

/**
 * The one sentence under a photo's verdict: the advice for its source; the server's own sentence only where the page
 * has none (a verdict it does not know). Both together said the same thing twice ("Blurred: hold the camera still…
 * The face is blurred: hold still"), and spoke of a camera to someone who uploaded a file.
 */
export function checkSentence(check: PhotoCheckResult, picked: boolean, source: PhotoSource): string {
  if (check.verdict === 'ok') return '';
  return adviceFor(check, picked, source) || check.detail;
}

/**
 * Reads the server's answer (`{ check: { verdict, words | reasons, ... }, faces: [{x,y,w,h}] }`) into what the page
 * keeps; an answer without a verdict it knows is taken from its face count.
 */
export function readCheckAnswer(answer: unknown): PhotoCheckResult {
  const a = (answer ?? {}) as { check?: Record<string, unknown>; faces?: unknown };
  const check = a.check ?? {};
  const faces = (Array.isArray(a.faces) ? a.faces : []).flatMap((f) => {
    const b = f as Partial<ShownFaceBox>;
    return [b.x, b.y, b.w, b.h].every((v) => typeof v === 'number') ? [{ x: b.x!, y: b.y!, w: b.w!, h: b.h! }] : [];
  });
  const known: PhotoVerdict[] = ['ok', 'no_face', 'several_faces', 'too_small', 'blurred', 'too_dark', 'too_bright', 'not_frontal'];
  let verdict = known.find((v) => v === check.verdict);
  if (!verdict) verdict = faces.length === 0 ? 'no_face' : faces.length > 1 ? 'several_faces' : 'ok';
  const method = check.detection_method === 'local' || check.detection_method === 'remote' ? check.detection_method : undefined;
  const note = typeof check.detection_note === 'string' && check.detection_note.trim() ? check.detection_note.trim() : undefined;
  const px = (check.measures as { face_px?: unknown } | undefined)?.face_px;
  const facePx = typeof px === 'number' && px > 0 ? Math.round(px) : undefined;
  return {
    verdict,
    detail: detailOf(check),
    faces,
    ...(method ? { method } : {}),
    ...(note ? { note } : {}),
    ...(facePx ? { facePx } : {}),
  };
}

/**
 * Which detector checked the photo, as a sentence; '' for the local detector when it was the one selected: that is
 * the default, and the training summary names the detector, so a word on every photo would say nothing new. Remote
 * is named (the person chose it and sees it was used); a fallback is named too, since training will then find the
 * faces with another detector than the one that checked them (its reason: detectionReason).
 */
export function detectionText(check: PhotoCheckResult): string {
  if (check.note) return 'Checked with the local detector: remote detection could not be used.';
  return check.method === 'remote' ? 'Checked with remote detection.' : '';
}

/** The same in a few words, for a small thumbnail: '' for the local detector used as selected. */
export function detectionShort(check: PhotoCheckResult): string {
  if (check.note) return 'Local detection: remote could not be used';
  return check.method === 'remote' ? 'Remote detection' : '';
}

/** Why the selected detector was not used, in the server's words as a sentence (they name the model server's error); '' when it was. */
export function detectionReason(check: PhotoCheckResult): string {
  if (!check.note) return '';
  return `${capital(check.note)}${/[.!?]$/.test(check.note) ? '' : '.'}`;
}

function detailOf(check: Record<string, unknown>): string {
  const words = check.words ?? check.message;
  if (typeof words === 'string') return words;
  if (Array.isArray(words) && words.every((w) => typeof w === 'string')) return words.join(' ');
  const reasons = check.reasons;
  if (Array.isArray(reasons)) {
    return reasons
      .map((r) => (typeof r === 'string' ? r : typeof (r as { words?: unknown })?.words === 'string' ? (r as { words: string }).words : ''))
      .filter(Boolean)
      .join(' ');
  }
  return '';
}

function capital(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
