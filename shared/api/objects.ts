/** Object detection: `POST /api/objects/detect`, `GET /api/objects/classes`, `GET /api/objects/status`. */
import { z } from 'zod';
import { OBJECT_CLASSES } from '../objects/classes.js';
import { compat, imageField } from './common.js';

export const objectDetectRequest = z
  .object({
    image: imageField,
    confidence: z
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be from 0 to 1')
      .max(1, 'must be from 0 to 1')
      .optional()
      .meta({ description: "Lowest score reported, 0 to 1; the server's OBJECT_CONFIDENCE when absent.", example: 0.4 }),
  })
  .meta({ id: 'ObjectDetectRequest' });
export type ObjectDetectRequest = z.infer<typeof objectDetectRequest>;

/** A detected object (the detector's wire shape; also what a browser reports in a stored result). */
export const detectedObject = z
  .object({
    class_id: z
      .number({ error: 'must be an integer from 0 to 79' })
      .int('must be an integer from 0 to 79')
      .min(0, 'must be from 0 to 79')
      .max(79, 'must be from 0 to 79')
      .meta({ description: 'Index into the 80 COCO classes.' }),
    class_name: z.enum(OBJECT_CLASSES, { error: 'must be one of the 80 class names of GET /api/objects/classes' }),
    confidence: z
      .number({ error: 'must be a number from 0 to 1' })
      .min(0, 'must be from 0 to 1')
      .max(1, 'must be from 0 to 1')
      .meta({ description: 'Detector score, 0 to 1.' }),
    x: z.number({ error: 'must be a number' }),
    y: z.number({ error: 'must be a number' }),
    w: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
    h: z.number({ error: 'must be a number' }).min(0, 'must not be negative'),
  })
  .refine((o) => OBJECT_CLASSES[o.class_id] === o.class_name, { path: ['class_name'], message: 'does not match class_id' })
  .meta({
    id: 'DetectedObject',
    description: 'Box in integer pixels of the submitted image, clipped to it.',
    example: { class_id: 0, class_name: 'person', confidence: 0.91, x: 40, y: 12, w: 210, h: 380 },
  });

export const objectDetectionResponse = z
  .object({
    objects: z.array(detectedObject),
    count: z.number().int(),
    summary: z.record(z.string(), z.number().int()).meta({ description: 'Class name -> number of objects of that class.' }),
  })
  .meta({
    id: 'ObjectDetectionResponse',
    example: {
      objects: [{ class_id: 0, class_name: 'person', confidence: 0.91, x: 40, y: 12, w: 210, h: 380 }],
      count: 1,
      summary: { person: 1 },
    },
  });
export type ObjectDetectionResponse = z.infer<typeof objectDetectionResponse>;

/** The detector's own report (the engine's; `GET /api/objects/status` adds the original service's fields). */
const detectorStatusFields = {
  name: z.string(),
  runtime: z.string().nullable(),
  input_size: z.number().int().nullable(),
  classes: z.number().int(),
  available: z.boolean().meta({
    description: 'A detection request would be answered: the detector is loaded, loading, or loads on that request (`not_loaded`).',
  }),
  state: z.enum(['not_loaded', 'loading', 'ready', 'error', 'disabled']).meta({
    description:
      '`not_loaded`: it loads on the next request, which waits for it (not used since the start, or let go after ENGINE_IDLE_RELEASE_S, #38).',
  }),
  reason: z.string().optional(),
  confidence_threshold: z.number(),
  nms_iou: z.number(),
  load_ms: z.number().nullable(),
};
export type ObjectDetectorStatus = z.infer<z.ZodObject<typeof detectorStatusFields>>;

export const objectStatusResponse = z
  .object({
    ...detectorStatusFields,
    type: compat(z.string(), 'what runs the detector (`runtime`, or `none` before it loaded).'),
    classes_count: compat(z.number().int(), 'the number of classes (`classes`).'),
  })
  .meta({
    id: 'ObjectStatusResponse',
    example: {
      name: 'yolov8n',
      runtime: 'onnxruntime-node',
      input_size: 640,
      classes: 80,
      available: true,
      state: 'ready',
      confidence_threshold: 0.25,
      nms_iou: 0.45,
      load_ms: 310,
      type: 'onnxruntime-node',
      classes_count: 80,
    },
  });
export type ObjectStatusResponse = z.infer<typeof objectStatusResponse>;

export const objectClassesResponse = z
  .object({
    classes: z.array(z.enum(OBJECT_CLASSES)),
    count: z.number().int(),
    detector: compat(objectStatusResponse, 'the detector, as `GET /api/objects/status` reports it.'),
    detector_name: z.string().meta({ description: 'The detector (`nanodet`, or the YOLO file).' }),
  })
  .meta({ id: 'ObjectClassesResponse' });
export type ObjectClassesResponse = z.infer<typeof objectClassesResponse>;

/** The name this schema had in contract.ts. */
export const detectedObjectSchema = detectedObject;
