/** POST /api/recognize: faces in one image, each with a label and a confidence. */
import { Hono } from 'hono';
import type { RecognizeResponse } from '../../shared/api/faces.js';
import type { RgbImage } from '../../shared/image/types.js';
import type { RecognitionDescriptors } from '../engines/faces/face-service.js';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';
import { keepRecognition } from '../sightings/hooks.js';

/** The original service said on each face which detector found it (its clients read `faces[].detection_method`). */
export function withFaceDetectionMethod<T extends Pick<RecognizeResponse, 'faces' | 'detection_method'>>(answer: T): T {
  return { ...answer, faces: answer.faces.map((face) => ({ ...face, detection_method: answer.detection_method })) };
}

export function recognizeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'recognize', async (c, { body }) => {
    // One request may name its recognizer (the identity provider's second factor always asks for embedding).
    const model = body.recognition_model === 'dlib' ? 'embedding' : body.recognition_model;
    const bytes = decodeBase64Image(body.image);
    // The faces kept as sightings (SIGHTINGS_*): their crops copied from the decoded image while this request holds
    // it, encoded and stored after this answer, never holding it up; the recognition's descriptors are theirs too.
    const keep = (image: RgbImage, answer: RecognizeResponse, described?: RecognitionDescriptors) =>
      keepRecognition(ctx, c, { source: body.source ?? 'api', camera: body.camera ?? null, image, answer, described });
    // #36 4: sightings' work waits while this runs (and shortly after): recognition comes first.
    const answer = await ctx.sightingRecorder.recognizing(() => timeEngine(c, 'recognize', () => ctx.faces.recognize(bytes, model, keep)));
    return withFaceDetectionMethod(answer);
  });
  return app;
}
