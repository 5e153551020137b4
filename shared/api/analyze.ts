/**
 * `POST /api/analyze`: the original service's (v1.2.0) facial analysis of one image, without a question. Every face
 * with its label and facial features and the detector that found it, the cascades the server has, and Lookout's own
 * additions: the objects in the image and the detection method (the same analysis `POST /api/chat` gives its LLM).
 */
import { z } from 'zod';
import { chatFace, EXAMPLE_CHAT_FACE } from './chat.js';
import { compat, detectionMethod, imageField } from './common.js';
import { detectedObject } from './objects.js';

export const analyzeRequest = z.object({ image: imageField }).meta({ id: 'AnalyzeRequest' });
export type AnalyzeRequest = z.infer<typeof analyzeRequest>;

export const analyzedFace = chatFace
  .extend({ detection_method: compat(detectionMethod, 'the detector that found this face (as the top-level `detection_method`).') })
  .meta({ id: 'AnalyzedFace', description: 'One face: its label, its facial features and the detector that found it.' });

/** The original's `cascades_loaded`: every one is loaded (the server cannot start without them), `profile` included. */
export const cascadesLoaded = z
  .object({ face: z.boolean(), eye: z.boolean(), smile: z.boolean(), profile: z.boolean(), eye_glasses: z.boolean() })
  .meta({ id: 'CascadesLoaded' });

export const analyzeResponse = z
  .object({
    faces: z.array(analyzedFace),
    count: z.number().int().min(0).meta({ description: 'The number of faces.' }),
    cascades_loaded: compat(cascadesLoaded, 'which Haar cascades the facial analysis has.'),
    detection_method: detectionMethod,
    objects: z.array(detectedObject).meta({ description: 'The objects found (none when the object detector is off).' }),
    objects_unavailable: z
      .string()
      .optional()
      .meta({ description: 'Set when object detection could not run (switched off, not loaded): why, in words.' }),
  })
  .meta({
    id: 'AnalyzeResponse',
    example: {
      faces: [{ ...EXAMPLE_CHAT_FACE, detection_method: 'local' }],
      count: 1,
      cascades_loaded: { face: true, eye: true, smile: true, profile: true, eye_glasses: true },
      detection_method: 'local',
      objects: [{ class_id: 63, class_name: 'laptop', confidence: 0.8, x: 300, y: 260, w: 200, h: 120 }],
    },
  });
export type AnalyzeResponse = z.infer<typeof analyzeResponse>;
