/**
 * A vision worker thread: the shared recognition pipeline (Haar cascade + LBPH) on images sent by the API
 * thread, so every core works on requests while the event loop stays free for I/O. When another worker of the
 * pool is idle, the cascade's pyramid is shared with it (shared/vision/cascade-split.ts, the same boxes), so a
 * lone request is answered in about half the time; under load each worker scans its own images whole.
 */
import { workerData } from 'node:worker_threads';
import type { GrayImage } from '../../../shared/image/types.js';
import { detectOptionsOf, FacePipeline } from '../../../shared/recognition/pipeline.js';
import { labelIdOf, lbphLabelDistances } from '../../../shared/recognition/verify.js';
import { detectSplit, type PartRunner } from '../../../shared/vision/cascade-split.js';
import { facialFeaturesOfFace, parseFeatureCascades, type FeatureCascades } from '../../../shared/vision/facial-features.js';
import { detectMultiScale, type HaarCascade, parseHaarCascade } from '../../../shared/vision/haar-cascade.js';
import { profileFaceFound } from '../../../shared/vision/profile-face.js';
// #26 enrollment
import { checkPhoto, findSmallFaces, measuredFace } from '../../../shared/recognition/photo-check.js';
import { eyeCandidates } from '../../../shared/vision/eye-alignment.js';
import { askForHelp, helpersIdle, serveOps } from '../workers/worker-host.js';
import type { VisionOps, VisionWorkerData } from './vision-protocol.js';

const config = workerData as VisionWorkerData;
const cascade = parseHaarCascade(config.cascadeXml);
const options = detectOptionsOf(config.cascade);

/** The later levels of the pyramid on an idle worker (its own copy of the pixels), or null: none is free. */
const onIdleWorker: PartRunner = ({ width, height, data }, part) => {
  const copy = data.slice(0, width * height);
  return askForHelp<VisionOps, 'detectPart'>('detectPart', { gray: { width, height, data: copy }, options: part }, [copy.buffer]);
};

const detect = (gray: GrayImage) => detectSplit(cascade, gray, options, helpersIdle() > 0 ? [onIdleWorker] : []);
// The eye cascade turns tilted faces upright before LBPH (shared/vision/eye-alignment.ts), for every recognition.
const eyeCascade = config.featureCascadeXml ? parseHaarCascade(config.featureCascadeXml.eye) : undefined;
const pipeline = new FacePipeline({ detect, ...(eyeCascade ? { eyeCascade } : {}) });

// The facial-feature cascades serve only the chat's analysis: parsed when the first one is asked for.
let featureCascades: FeatureCascades | null = null;
function features(): FeatureCascades {
  if (!config.featureCascadeXml) throw new Error('this vision worker was started without the facial-feature cascades');
  featureCascades ??= parseFeatureCascades(config.featureCascadeXml);
  return featureCascades;
}
let profileCascade: HaarCascade | null = null;
function profile(xml: string): HaarCascade {
  profileCascade ??= parseHaarCascade(xml);
  return profileCascade;
}

serveOps<VisionOps>({
  detect: ({ gray }) => pipeline.detect(gray),
  detectPart: ({ gray, options: part }) => detectMultiScale(cascade, gray, part),
  recognize: ({ gray, boxes, rule }) => pipeline.recognize({ gray }, { recognizer: 'lbph', rule, boxes }),
  trainSample: ({ gray, boxes }) => pipeline.sample({ gray }, { boxes }),
  setModel: (lbph) => pipeline.setModels({ lbph }),
  setNegatives: (lbph) => pipeline.setNegatives({ lbph }),
  verify: async ({ gray, boxes, label }) => {
    const found = await pipeline.detect(gray, boxes);
    // Read once: the names and the samples come from the same model.
    const trained = pipeline.models.lbph;
    const labelId = trained ? labelIdOf(trained.names, label) : null;
    const measured =
      trained && labelId !== null && found.length === 1
        ? lbphLabelDistances(gray, found[0], trained.model, labelId, eyeCascade ?? null, pipeline.corrections.lbph.get(label))
        : null;
    return {
      boxes: found,
      trained: trained !== null,
      enrolled: labelId !== null,
      distance: measured?.distance ?? null,
      correction: measured?.correction ?? null,
    };
  },
  features: ({ faces }) =>
    faces.map((f) => {
      const found = facialFeaturesOfFace(features(), f.gray, f.origin);
      const xml = config.profileCascadeXml;
      return xml && f.around ? { ...found, profile_face: profileFaceFound(profile(xml), f.around) } : found;
    }),
  // #26 enrollment: the faces (the remote engine's when given), and the picked (else largest) one measured, with
  // its eyes where the cascade is here.
  checkPhoto: async ({ gray, pick, boxes: found }) => {
    let boxes = await pipeline.detect(gray, found);
    // None found by the local cascade: a small face is looked for again, so the check says "too small", not "no face".
    if (!found && boxes.length === 0) boxes = findSmallFaces(gray, cascade, options);
    const face = measuredFace(boxes, pick);
    const eyes = face && eyeCascade ? eyeCandidates(eyeCascade, gray, face) : undefined;
    return { boxes, check: checkPhoto({ gray, faces: boxes, ...(pick ? { pick } : {}), ...(eyes ? { eyes } : {}) }) };
  },
});
