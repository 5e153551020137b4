/** Training: `POST /api/train` and `GET /api/train/status`. */
import { z } from 'zod';
import { detectionMethod, isoTime, recognitionModel } from './common.js';

/** `POST /api/train` body: empty or `{}`; nothing in it is read yet. */
export const trainRequest = z.object({}).loose().meta({ id: 'TrainRequest', description: 'Empty or `{}`.' });

export const skippedImage = z
  .object({ label: z.string(), filename: z.string(), reason: z.enum(['no_face', 'unreadable']) })
  .meta({ id: 'SkippedImage', description: 'An image that gave no training face, with why: a person fixes it by retaking it.' });
export type SkippedImage = z.infer<typeof skippedImage>;

const featureCount = (description: string) => z.number().int().meta({ description });

/** #27: what a training did with the features kept per image (face box, LBPH histogram, descriptor). */
export const trainFeatures = z
  .object({
    reused: featureCount('Images whose stored features served whole: not decoded, not detected, not described.'),
    computed: featureCount(
      'Images decoded this run: new or changed images, and those whose stored features were missing, unreadable or made with another version.',
    ),
    detections: featureCount('Face detections run (a new image, or another detector).'),
    histograms: featureCount('LBPH histograms computed (a detected face, or another crop or alignment).'),
    descriptors: featureCount('Embedding descriptors computed (a detected face, or another descriptor model).'),
    removed: featureCount('Stored features of images no longer there, removed.'),
  })
  .meta({ id: 'TrainFeatures' });
export type TrainFeatures = z.infer<typeof trainFeatures>;

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
    features: trainFeatures.optional(),
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
      features: { reused: 10, computed: 3, detections: 3, histograms: 2, descriptors: 2, removed: 0 },
    },
  });
export type TrainResponse = z.infer<typeof trainResponse>;

export const trainStatusResponse = z
  .object({
    state: z.enum(['idle', 'running']),
    processed: z.number().int().meta({ description: 'Images processed so far in the running training.' }),
    total: z.number().int().meta({ description: 'Images the running training will process.' }),
    reused: z.number().int().optional().meta({ description: 'Of the images processed so far, those whose stored features served whole.' }),
    computed: z.number().int().optional().meta({ description: 'Of the images processed so far, those decoded and described.' }),
    last: trainResponse.optional(),
    last_error: z.object({ code: z.string(), message: z.string(), at: isoTime }).optional(),
  })
  .meta({ id: 'TrainStatusResponse', example: { state: 'running', processed: 5, total: 13 } });
export type TrainStatusResponse = z.infer<typeof trainStatusResponse>;
