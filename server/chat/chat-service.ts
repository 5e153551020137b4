/**
 * The chat flow (spec "Chat flow"): with an image, Lookout's own analysis (faces with the active engines,
 * objects) becomes the prompt's context; without one, only the message is sent. The LLM is any
 * OpenAI-compatible endpoint.
 */
import type { ChatAnalysis } from '../../shared/api/index.js';
import { buildAnalysisContext, buildChatMessages, type ChatMessage } from '../../shared/chat/prompt.js';
import type { DetectedObject } from '../../shared/objects/types.js';
import type { FaceService } from '../engines/faces/face-service.js';
import type { ObjectService } from '../engines/objects/object-service.js';
import { ApiError } from '../http/errors.js';
import type { DecodedImage, ImageDecoder } from '../imaging/decode.js';
import type { ChatStatus } from './chat-status.js';
import type { LlmStream } from './llm-client.js';

export interface ChatServiceOptions {
  status: ChatStatus;
  faces: FaceService;
  objects: ObjectService;
  systemPrompt: string;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts). */
  decoder: ImageDecoder;
}

export class ChatService {
  constructor(private readonly opts: ChatServiceOptions) {}

  /** Runs the image analysis and builds the prompt; 503 first when chat cannot answer anyway. */
  async prepare(message: string, image?: Uint8Array): Promise<{ messages: ChatMessage[]; analysis: ChatAnalysis | null }> {
    this.opts.status.requireClient();
    if (!image) return { messages: buildChatMessages({ systemPrompt: this.opts.systemPrompt, question: message }), analysis: null };
    // One decode for both analyses (the gray buffer moves to the face worker, so objects get the RGB); the pixels
    // are held (and counted in the budget) only while they are analysed, not while the LLM answers.
    return this.opts.decoder.use(image, (decoded) => this.analyse(message, decoded));
  }

  private async analyse(message: string, decoded: DecodedImage): Promise<{ messages: ChatMessage[]; analysis: ChatAnalysis }> {
    const { width, height } = decoded.rgb;
    // Faces and objects run in different worker pools: in parallel, the analysis costs the slower of the two.
    let objectsUnavailable: string | undefined;
    const [recognized, objects] = await Promise.all([
      this.opts.faces.recognizeDecoded(decoded),
      this.opts.objects.detectDecoded(decoded.rgb).then(
        (r) => r.objects,
        (err: unknown): DetectedObject[] => {
          // Faces alone still make a useful answer; say in the analysis what is missing.
          if (!(err instanceof ApiError) || err.code !== 'detector_unavailable') throw err;
          objectsUnavailable = err.message;
          return [];
        },
      ),
    ]);
    const context = buildAnalysisContext({
      faces: recognized.faces,
      objects,
      detectionMethod: recognized.detection_method,
      recognitionModel: recognized.recognition_model,
      imageWidth: width,
      imageHeight: height,
    });
    return {
      messages: buildChatMessages({ systemPrompt: this.opts.systemPrompt, context, question: message }),
      analysis: {
        faces: recognized.faces,
        objects,
        detection_method: recognized.detection_method,
        ...(objectsUnavailable ? { objects_unavailable: objectsUnavailable } : {}),
      },
    };
  }

  complete(messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
    return this.opts.status.requireClient().complete(messages, { signal });
  }

  stream(messages: ChatMessage[], signal?: AbortSignal): Promise<LlmStream> {
    return this.opts.status.requireClient().stream(messages, { signal });
  }
}
