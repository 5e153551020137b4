/** Training: `POST /api/train` and `GET /api/train/status`. */
import { z } from 'zod';
import { detectionMethod, isoTime, recognitionModel } from './common.js';

/** `POST /api/train` body: empty or `{}`; nothing in it is read yet. */
export const trainRequest = z.object({}).loose().meta({ id: 'TrainRequest', description: 'Empty or `{}`.' });

export const skippedImage = z
  .object({ label: z.string(), filename: z.string(), reason: z.enum(['no_face', 'unreadable']) })
  .meta({ id: 'SkippedImage', description: 'An image that gave no training face, with why: a person fixes it by retaking it.' });
export type SkippedImage = z.infer<typeof skippedImage>;

export const trainResponse = z
  .object({
    status: z.literal('ok'),
    labels: z.array(z.string()),
    total_faces: z.number().int(),
    total_labels: z.number().int(),
    faces_per_label: z.record(z.string(), z.number().int()).meta({ description: 'Faces used per label.' }),
    images_total: z.number().int(),
    images_skipped: z.array(skippedImage),
    detection_method: detectionMethod,
    recognition_model: recognitionModel.meta({ description: 'The active recognizer.' }),
    recognizers_trained: z
      .array(recognitionModel)
      .meta({ description: 'Every recognizer this run trained (the embedding recognizer too when its model is loaded).' }),
    duration_ms: z.number(),
    trained_at: isoTime,
  })
  .meta({
    id: 'TrainResponse',
    example: {
      status: 'ok',
      labels: ['alice-smith'],
      total_faces: 12,
      total_labels: 1,
      faces_per_label: { 'alice-smith': 12 },
      images_total: 13,
      images_skipped: [{ label: 'alice-smith', filename: 'c0ffee00-1234.jpg', reason: 'no_face' }],
      detection_method: 'local',
      recognition_model: 'lbph',
      recognizers_trained: ['lbph', 'embedding'],
      duration_ms: 2140,
      trained_at: '2024-05-01T12:00:00.000Z',
    },
  });
export type TrainResponse = z.infer<typeof trainResponse>;

export const trainStatusResponse = z
  .object({
    state: z.enum(['idle', 'running']),
    processed: z.number().int().meta({ description: 'Images processed so far in the running training.' }),
    total: z.number().int().meta({ description: 'Images the running training will process.' }),
    last: trainResponse.optional(),
    last_error: z.object({ code: z.string(), message: z.string(), at: isoTime }).optional(),
  })
  .meta({ id: 'TrainStatusResponse', example: { state: 'running', processed: 5, total: 13 } });
export type TrainStatusResponse = z.infer<typeof trainStatusResponse>;
