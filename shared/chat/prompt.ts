/**
 * The chat prompt (spec "Chat flow"): system text, then one user turn holding the image analysis (when an image
 * was sent) and the question, in the OpenAI `messages` shape. Pure functions: the server builds the prompt and
 * the browser can show exactly what was asked.
 */
import type { DetectionMethod, FaceResult, RecognitionModel } from '../api/index.js';
import type { DetectedObject } from '../objects/types.js';
import type { FacialFeatures } from '../vision/facial-features.js';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are Lookout's assistant. When an image analysis is given, describe what Lookout's analysis found: " +
  'the faces, their identities and confidence, their eyes, smile and eyeglasses, and the detected objects. Never invent or guess identities: ' +
  'a face labelled unknown is a person Lookout did not recognise, and the analysis is all you know about the ' +
  'image. When no analysis is given, no image was sent. Answer briefly.';

export interface AnalysisInput {
  /** With `features` (the chat analysis), every face is listed with its eyes, smile and eyeglasses. */
  faces: readonly (FaceResult & { features?: FacialFeatures })[];
  objects: readonly DetectedObject[];
  detectionMethod: DetectionMethod;
  recognitionModel: RecognitionModel;
  imageWidth: number;
  imageHeight: number;
}

/** Known faces listed one per line up to this many; the rest are counted (the LLM context is 8192 tokens). */
export const MAX_LISTED_FACES = 20;

/** Where a box's centre lies across the image, in words the model can repeat. */
function horizontalPlace(x: number, w: number, imageWidth: number): string {
  if (!(imageWidth > 0)) return '';
  const c = (x + w / 2) / imageWidth;
  return c < 1 / 3 ? 'left' : c > 2 / 3 ? 'right' : 'centre';
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Says how the feature facts were found, so "no eyeglasses" is read as "none detected". */
export const FEATURES_NOTE =
  "Eyes, smile and eyeglasses come from OpenCV's eye, smile and eyeglasses detectors run on each face: " +
  '"no" means none was detected, not a certainty.';

/** One face's features in words, e.g. `eyes seen: 2; smiling: no; eyeglasses: yes`. */
export function featuresText(f: FacialFeatures): string {
  if (f.face_too_small) return 'face too small to check eyes, smile or eyeglasses';
  return `eyes seen: ${f.eyes}; smiling: ${f.smiling ? 'yes' : 'no'}; eyeglasses: ${f.eyeglasses ? 'yes' : 'no'}`;
}

/** Every face on its own line with its features: known ones by confidence, then unknown ones left to right. */
function faceLinesWithFeatures(a: AnalysisInput, lines: string[]): void {
  const known = a.faces.filter((f) => f.label !== 'unknown');
  const unknown = a.faces.filter((f) => f.label === 'unknown');
  known.sort((p, q) => q.confidence - p.confidence || p.label.localeCompare(q.label) || p.x - q.x || p.y - q.y);
  unknown.sort((p, q) => p.x - q.x || p.y - q.y);
  const ordered = [...known, ...unknown];
  for (const f of ordered.slice(0, MAX_LISTED_FACES)) {
    const place = horizontalPlace(f.x, f.w, a.imageWidth);
    const who =
      f.label === 'unknown' ? 'unknown person (not recognised; identity not known)' : `${f.label}: confidence ${Math.round(f.confidence)}%`;
    const features = f.features ? `; ${featuresText(f.features)}` : '';
    lines.push(`- ${who}${place ? `, ${place} of the image` : ''}${features}`);
  }
  if (ordered.length > MAX_LISTED_FACES) lines.push(`- and ${plural(ordered.length - MAX_LISTED_FACES, 'more face')}`);
  lines.push(FEATURES_NOTE);
}

/** The analysis of one image as compact text, e.g. for a prompt. Deterministic: same analysis, same text. */
export function buildAnalysisContext(a: AnalysisInput): string {
  const lines: string[] = [];
  lines.push(
    `Image analysis by Lookout (image ${Math.round(a.imageWidth)}x${Math.round(a.imageHeight)} pixels, ` +
      `face detection method: ${a.detectionMethod}, recognition model: ${a.recognitionModel}).`,
  );

  const known = a.faces.filter((f) => f.label !== 'unknown');
  const unknown = a.faces.length - known.length;
  if (a.faces.length === 0) {
    lines.push('Faces: none detected.');
  } else {
    lines.push(`Faces: ${plural(a.faces.length, 'face')} detected, ${known.length} recognised, ${unknown} unknown.`);
  }
  if (a.faces.some((f) => f.features)) {
    faceLinesWithFeatures(a, lines);
  } else if (a.faces.length > 0) {
    // Best matches first, so a cut list keeps the most certain identities.
    const listed = [...known].sort((p, q) => q.confidence - p.confidence || p.label.localeCompare(q.label));
    for (const f of listed.slice(0, MAX_LISTED_FACES)) {
      const place = horizontalPlace(f.x, f.w, a.imageWidth);
      lines.push(`- ${f.label}: confidence ${Math.round(f.confidence)}%${place ? `, ${place} of the image` : ''}`);
    }
    if (listed.length > MAX_LISTED_FACES) lines.push(`- and ${plural(listed.length - MAX_LISTED_FACES, 'more recognised face')}`);
    if (unknown > 0) lines.push(`- ${plural(unknown, 'unknown face')} (not recognised; identity not known)`);
  }

  if (a.objects.length === 0) {
    lines.push('Objects: none detected.');
  } else {
    const counts = new Map<string, number>();
    for (const o of a.objects) counts.set(o.class_name, (counts.get(o.class_name) ?? 0) + 1);
    const sorted = [...counts].sort((p, q) => q[1] - p[1] || p[0].localeCompare(q[0]));
    lines.push(`Objects: ${plural(a.objects.length, 'object')} detected: ${sorted.map(([name, n]) => `${name} ${n}`).join(', ')}.`);
  }
  return lines.join('\n');
}

export interface ChatPromptInput {
  /** Empty or absent: DEFAULT_SYSTEM_PROMPT. */
  systemPrompt?: string;
  /** The analysis text of the attached image; absent when no image was sent. */
  context?: string;
  question: string;
}

/** The OpenAI `messages`: system text, then the user turn (context, when given, before the question). */
export function buildChatMessages(input: ChatPromptInput): ChatMessage[] {
  const system = input.systemPrompt?.trim() || DEFAULT_SYSTEM_PROMPT;
  const question = input.question.trim();
  const context = input.context?.trim();
  const user = context ? `${context}\n\nQuestion: ${question}` : question;
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}
