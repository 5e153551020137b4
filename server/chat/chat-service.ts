/**
 * The chat flow (spec "Chat flow"): with an image, Lookout's own analysis (faces with the active engines and
 * their facial features, objects) becomes the prompt's context; without one, only the message is sent. The
 * LLM is any OpenAI-compatible endpoint.
 */
import type { ChatAnalysis, ChatFace, FaceResult } from '../../shared/api/index.js';
import { buildAnalysisContext, buildChatMessages, type ChatMessage } from '../../shared/chat/prompt.js';
import type { RgbImage } from '../../shared/image/types.js';
import type { DetectedObject } from '../../shared/objects/types.js';
import { grayFaceCrop, noFeatures, withOriginalNames } from '../../shared/vision/facial-features.js';
import { profileRegion } from '../../shared/vision/profile-face.js';
import type { FaceService } from '../engines/faces/face-service.js';
import type { FaceCrop, ServerFacialFeatures } from '../engines/faces/vision-protocol.js';
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
  /** Eyes, smile, eyeglasses and profile of each face crop, in order (the vision workers' `features`). */
  features: (faces: FaceCrop[]) => Promise<ServerFacialFeatures[]>;
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

  /**
   * The analysis alone, with no question and no LLM (`POST /api/analyze`): it answers whether or not chat is set up.
   * Each call decodes once, within the pixel budget.
   */
  async analyze(image: Uint8Array): Promise<ChatAnalysis> {
    return this.opts.decoder.use(image, async (decoded) => (await this.analyseDecoded(decoded)).analysis);
  }

  private async analyse(message: string, decoded: DecodedImage): Promise<{ messages: ChatMessage[]; analysis: ChatAnalysis }> {
    const { context, analysis } = await this.analyseDecoded(decoded);
    return { messages: buildChatMessages({ systemPrompt: this.opts.systemPrompt, context, question: message }), analysis };
  }

  private async analyseDecoded(decoded: DecodedImage): Promise<{ context: string; analysis: ChatAnalysis }> {
    const { width, height } = decoded.rgb;
    // Faces and objects run in different worker pools: in parallel, the analysis costs the slower of the two.
    let objectsUnavailable: string | undefined;
    const [recognized, objects] = await Promise.all([
      // The features need the face boxes, and run while the objects are still being detected.
      this.opts.faces.recognizeDecoded(decoded).then(async (r) => ({ ...r, faces: await this.withFeatures(r.faces, decoded.rgb) })),
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
    // Each face says which detector found it, as the original's analysis and `POST /api/recognize` do.
    const faces = recognized.faces.map((f) => ({ ...f, detection_method: recognized.detection_method }));
    const context = buildAnalysisContext({
      faces,
      objects,
      detectionMethod: recognized.detection_method,
      recognitionModel: recognized.recognition_model,
      imageWidth: width,
      imageHeight: height,
    });
    return {
      context,
      analysis: {
        count: faces.length,
        faces,
        objects,
        detection_method: recognized.detection_method,
        ...(objectsUnavailable ? { objects_unavailable: objectsUnavailable } : {}),
      },
    };
  }

  /**
   * Each face with its facial features. Only here, for chat, not on every recognition: the three cascades run on
   * the face boxes' pixels alone. The crops come from the RGB pixels (the gray image went to the face worker), with
   * the same gray conversion, so the features are those of the decoded gray image.
   */
  private async withFeatures(faces: readonly FaceResult[], rgb: RgbImage): Promise<ChatFace[]> {
    const crops: FaceCrop[] = [];
    const index: (number | null)[] = faces.map((f) => {
      const crop = grayFaceCrop(rgb, { x: f.x, y: f.y, width: f.w, height: f.h });
      // The profile cascade looks at the head around the box (shared/vision/profile-face.ts).
      const around = crop ? grayFaceCrop(rgb, profileRegion(f)) : null;
      return crop ? crops.push(around ? { ...crop, around: around.gray } : crop) - 1 : null;
    });
    const found = crops.length > 0 ? await this.opts.features(crops) : [];
    return faces.map((f, i) => ({
      ...f,
      features: withOriginalNames(index[i] === null ? { ...noFeatures(), profile_face: false } : found[index[i]], f),
    }));
  }

  complete(messages: ChatMessage[], signal?: AbortSignal): Promise<string> {
    return this.opts.status.requireClient().complete(messages, { signal });
  }

  stream(messages: ChatMessage[], signal?: AbortSignal): Promise<LlmStream> {
    return this.opts.status.requireClient().stream(messages, { signal });
  }
}
