/**
 * What the recognition routes hand to the sighting recorder: POST /api/recognize (source api, page or camera),
 * POST /api/verify (source verify) and POST /api/results (a browser's faces with their crops, source browser).
 * Each returns at once: the crops' pixels are copied from the request's decoded image while it holds it (small
 * copies, so the recorder never decodes again nor takes any of the pixel budget), and the crops and rows are made
 * after the answer (server/sightings/sighting-recorder.ts).
 */
import type { Context } from 'hono';
import type { RecognizeResponse } from '../../shared/api/faces.js';
import { RESULT_CROP_MAX_BYTES, type ResultRecordInput } from '../../shared/api/results.js';
import type { VerifyResponse } from '../../shared/api/verify.js';
import type { Rect, RgbImage } from '../../shared/image/types.js';
import type { RecognitionDescriptors } from '../engines/faces/face-service.js';
import type { AppContext } from '../http/context.js';
import { ApiError } from '../http/errors.js';
import { copyFace, decisionOf, type FacePixels } from './sighting-recorder.js';

/** Who called: the signed-in user (or client) under AUTH_MODE=oidc; null otherwise. */
export function clientOf(c: Context): string | null {
  const principal = c.get('principal');
  if (!principal) return null;
  return principal.username ?? (principal.subject || null);
}

/**
 * A recognition's faces, kept as sightings of `source`: call it with the decoded image while the request holds it
 * (FaceService.recognize's `withPixels`). `described`: the descriptors the recognition computed, passed on as the
 * faces' own when they are of the descriptor model the recorder describes with (the embedding worker's), so a face
 * is described once; otherwise the recorder describes them as it would without.
 */
export function keepRecognition(
  ctx: AppContext,
  c: Context,
  r: {
    source: 'api' | 'page' | 'camera';
    camera: string | null;
    image: RgbImage;
    answer: RecognizeResponse;
    described?: RecognitionDescriptors;
  },
): void {
  if (r.answer.faces.length === 0 || !ctx.sightingRecorder.keeps(r.source)) return;
  const reused = reusableDescriptors(ctx, r.described, r.answer.faces.length);
  ctx.sightingRecorder.recordImage({
    source: r.source,
    client: clientOf(c),
    camera: r.camera,
    recognizer: r.answer.recognition_model,
    model_version: ctx.faces.trainedFiles.version,
    image: r.image,
    faces: r.answer.faces.map((face, i) => (reused ? { ...decisionOf(face), descriptor: reused[i] } : decisionOf(face))),
  });
}

/** A recognition's descriptors when they are what the recorder's own describe would give: the running embedding worker's model, one per face. */
function reusableDescriptors(
  ctx: AppContext,
  described: RecognitionDescriptors | undefined,
  faces: number,
): (Float32Array | null)[] | null {
  if (!described || described.descriptors.length !== faces) return null;
  const running = ctx.faces.embeddingAvailability;
  return running.available && running.descriptorModel === described.model ? described.descriptors : null;
}

/**
 * The crop pixels of a verification's first image or frame when it holds one face, copied while the request holds
 * the image (FaceService.verify's `withPixels`); `pixels()` is the copy once the verification is done.
 */
export function verificationPixels(ctx: AppContext): {
  withPixels: (index: number, rgb: RgbImage, boxes: Rect[]) => void;
  pixels: () => FacePixels | null;
} {
  let copied: FacePixels | null = null;
  return {
    withPixels: (index, rgb, boxes) => {
      if (index !== 0 || boxes.length !== 1 || !ctx.sightingRecorder.keeps('verify')) return;
      try {
        const [box] = boxes;
        copied = copyFace(rgb, { x: box.x, y: box.y, w: box.width, h: box.height });
      } catch (err) {
        ctx.log.warn(`sightings: not kept: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
    pixels: () => copied,
  };
}

/** A verification's one face (of its first image or frame), kept as a sighting of source `verify`. */
export function keepVerification(
  ctx: AppContext,
  c: Context,
  r: {
    /** The face's crop pixels (verificationPixels). */
    pixels: FacePixels | null;
    verdict: Omit<VerifyResponse, 'face' | 'frames'>;
    // The frames computed always carry both scores; #35 leaves them out of some answers only.
    frame: { face?: VerifyResponse['face']; distance?: number | null; confidence?: number; reason: string; match: boolean } | undefined;
  },
): void {
  const face = r.frame?.face;
  if (!r.frame || !face || !r.pixels || !ctx.sightingRecorder.keeps('verify')) return;
  const { verdict, frame, pixels } = r;
  ctx.sightingRecorder.recordCopies({
    source: 'verify',
    client: clientOf(c),
    camera: null,
    recognizer: verdict.recognition_model,
    model_version: ctx.faces.trainedFiles.version,
    faces: [
      {
        pixels,
        box: { x: face.x, y: face.y, w: face.w, h: face.h },
        label: frame.match ? verdict.label : null,
        candidate: frame.match ? null : verdict.label,
        distance: frame.distance ?? null,
        confidence: frame.confidence ?? 0,
        certainty: null,
        reason: frame.reason,
      },
    ],
  });
}

const JPEG_DATA_URL = 'data:image/jpeg;base64,';

/**
 * Takes the face crops out of a browser's result records (they are never stored with the result): checks each one
 * (a JPEG of at most 32 KB, else 400 and nothing is stored), and gives back the records without them and a function
 * that keeps the crops as sightings once the records are stored.
 */
export function takeCrops(ctx: AppContext, c: Context, records: ResultRecordInput[]): { records: ResultRecordInput[]; keep: () => void } {
  const found: { record: ResultRecordInput; index: number; crop: Uint8Array }[] = [];
  const stripped = records.map((record, r) => {
    if (!record.faces?.some((f) => f.crop !== undefined)) return record;
    const faces = record.faces.map(({ crop, ...face }, index) => {
      if (crop === undefined) return face;
      const text = crop.startsWith(JPEG_DATA_URL) ? crop.slice(JPEG_DATA_URL.length) : crop;
      const bytes = Buffer.from(text, 'base64');
      const where = `"results.${r}.faces.${index}.crop"`;
      if (bytes.length > RESULT_CROP_MAX_BYTES)
        throw new ApiError('bad_request', `${where}: must be at most ${RESULT_CROP_MAX_BYTES / 1024} KB`);
      if (bytes.length < 4 || bytes[0] !== 0xff || bytes[1] !== 0xd8 || bytes[2] !== 0xff) {
        throw new ApiError('bad_request', `${where}: must be a JPEG image`);
      }
      found.push({ record, index, crop: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) });
      return face;
    });
    return { ...record, faces };
  });
  const client = clientOf(c);
  return {
    records: stripped,
    keep: () => {
      if (found.length === 0 || !ctx.sightingRecorder.keeps('browser')) return;
      for (const record of new Set(found.map((f) => f.record))) {
        const faces = found.filter((f) => f.record === record);
        ctx.sightingRecorder.recordCrops({
          source: 'browser',
          client,
          camera: record.source ?? null,
          recognizer: record.recognition_model ?? 'unknown',
          model_version: record.model_version ?? null,
          seen_at: new Date(record.captured_at),
          // A re-sent record keeps no second sighting: the ids come from the record's.
          faces: faces.map((f) => ({ ...decisionOf(record.faces![f.index]), crop: f.crop, id: `${record.id}-${f.index}` })),
        });
      }
    },
  };
}
