/**
 * POST /api/analyze `{ image }`: the original service's facial analysis of one image (its clients call it), answered
 * with the chat's analysis (faces with labels and facial features, objects) but no question and no LLM.
 */
import { Hono } from 'hono';
import type { AnalyzeResponse } from '../../shared/api/analyze.js';
import type { AppContext } from '../http/context.js';
import { timeEngine } from '../http/observability.js';
import { mountRoute } from '../http/route.js';
import { decodeBase64Image } from '../imaging/decode.js';

/** The cascades behind the analysis: the face cascade and the eye, eyeglasses, smile and profile-face cascades. */
const CASCADES_LOADED = { face: true, eye: true, smile: true, profile: true, eye_glasses: true } as const;

export function analyzeRoutes(ctx: AppContext): Hono {
  const app = new Hono();
  mountRoute(app, 'analyze', async (c, { body }): Promise<AnalyzeResponse> => {
    const bytes = decodeBase64Image(body.image);
    const analysis = await timeEngine(c, 'recognize', () => ctx.chat.analyze(bytes));
    const { faces, objects, objects_unavailable } = analysis;
    const method = analysis.detection_method === 'remote' ? 'remote' : 'local';
    return {
      faces: faces.map((face) => ({ ...face, detection_method: method })),
      count: faces.length,
      cascades_loaded: CASCADES_LOADED,
      detection_method: method,
      objects,
      ...(objects_unavailable ? { objects_unavailable } : {}),
    };
  });
  return app;
}
