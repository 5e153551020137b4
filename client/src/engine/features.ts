/**
 * Facial features in the engine worker (`recognize` with `features: true`): the eyeglasses and smile cascades
 * from the server's /models/, fetched and parsed on first use only (recognition alone never downloads them), with
 * the eye cascade the face engine already parsed at start (it aligns faces for LBPH), then
 * shared/vision/facial-features.ts on each face of the frame's gray image: the same module and the same pixels as
 * the server's chat analysis, so the same features.
 */
import type { FaceResult } from '../../../shared/api/index';
import type { GrayImage } from '../../../shared/image/types';
import type { HaarCascade } from '../../../shared/vision/cascade/parse';
import {
  FEATURE_CASCADE_FILES,
  facialFeatures,
  parseFeatureCascade,
  type ChatFacialFeatures,
  withOriginalNames,
  type FeatureCascadeName,
  type FeatureCascades,
} from '../../../shared/vision/facial-features';
import { fetchModelFile } from './fetch-model';

export type FeatureCascadeUrls = Record<FeatureCascadeName, string>;

/** Where the cascades are by default: next to the face cascade in the server's /models/. */
export const DEFAULT_FEATURE_CASCADE_URLS: FeatureCascadeUrls = {
  eye: `/models/${FEATURE_CASCADE_FILES.eye}`,
  eyeglasses: `/models/${FEATURE_CASCADE_FILES.eyeglasses}`,
  smile: `/models/${FEATURE_CASCADE_FILES.smile}`,
};

const fetchText = async (url: string): Promise<string> => (await fetchModelFile(url)).text();

/**
 * Loads the eyeglasses and smile cascades once, beside the given eye cascade (the face engine's: fetched and
 * parsed once per worker); a failed load is forgotten, so a later call tries again.
 */
export class FeatureCascadeLoader {
  private loading: Promise<FeatureCascades> | null = null;

  constructor(
    private readonly urls: Omit<FeatureCascadeUrls, 'eye'>,
    private readonly eye: HaarCascade,
  ) {}

  load(): Promise<FeatureCascades> {
    this.loading ??= (async () => {
      const [eyeglasses, smile] = await Promise.all([fetchText(this.urls.eyeglasses), fetchText(this.urls.smile)]);
      return {
        eye: this.eye,
        eyeglasses: parseFeatureCascade('eyeglasses', eyeglasses),
        smile: parseFeatureCascade('smile', smile),
      };
    })().catch((err: unknown) => {
      this.loading = null;
      throw new Error(`the facial-feature cascades could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
    });
    return this.loading;
  }
}

/** Each face with its features, computed on the frame's gray image. */
export function facesWithFeatures(
  cascades: FeatureCascades,
  gray: GrayImage,
  faces: readonly FaceResult[],
): (FaceResult & { features: ChatFacialFeatures })[] {
  return faces.map((f) => ({
    ...f,
    features: withOriginalNames(facialFeatures(cascades, gray, { x: f.x, y: f.y, width: f.w, height: f.h }), f),
  }));
}
