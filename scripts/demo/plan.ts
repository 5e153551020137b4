/**
 * Which steps the tour shows, from what the server it tours can do: a step for a feature that is switched off or
 * has no backend would show a "not configured" page, which is not a demonstration. The group photo's faces are
 * found by the model server when one is connected (FaceBoxes finds every face of the photo and nothing else),
 * else by the Haar cascade on a photo where the cascade finds faces only.
 */

export interface TourConfig {
  /** The server's remote face detection (a KServe V2 model server) is connected. */
  remoteDetection: boolean;
  /** A PPE detector is enabled and reachable. */
  safety: boolean;
  /** A language model is configured and reachable. */
  chat: boolean;
}

export type StepSlug = 'dashboard' | 'training-photos' | 'training-done' | 'group-photo' | 'objects' | 'safety' | 'chat' | 'recognize-live';

/**
 * The steps in order: a first start, the person taught from the camera, strangers in a group photo, objects,
 * Safety and Chat where they work, and last the person named live (the moment a viewer remembers).
 */
export function planTour(config: TourConfig): StepSlug[] {
  return [
    'dashboard',
    'training-photos',
    'training-done',
    'group-photo',
    'objects',
    ...(config.safety ? (['safety'] as const) : []),
    ...(config.chat ? (['chat'] as const) : []),
    'recognize-live',
  ];
}

/**
 * The group photo (test/fixtures/images/SOURCES.md) and where its faces are found. Four people: the model server
 * finds the four faces; the Haar cascade, two of them and no wall or shadow (on the photos with more people it also
 * boxes a patch of wall, a shadow or a window blind).
 */
export function groupPhotoFor(config: Pick<TourConfig, 'remoteDetection'>): { photo: string; detection: 'remote' | 'local' } {
  return { photo: 'faces/sample4.jpg', detection: config.remoteDetection ? 'remote' : 'local' };
}
