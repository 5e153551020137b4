/**
 * What a training run did, in words (#27 incremental training): the server keeps each image's features (face box,
 * LBPH histogram, descriptor) and a training reads again only new or changed images, so the page says how many
 * were reused and how many computed, while it runs and when it is done. An older server sends no counts: the words
 * are then those of before.
 */
import type { TrainFeatures } from '../../../../shared/api/index';

const images = (n: number) => `${n} ${n === 1 ? 'image' : 'images'}`;
const all = (n: number) => (n === 1 ? 'The 1 image' : `All ${n} images`);

/** The progress line: "Processed 3 of 6 images (2 reused, 1 computed)"; counts only once some image is done. */
export function progressText(processed: number, total: number, reused?: number, computed?: number): string {
  if (total === 0) return 'Starting the training…';
  const base = `Processed ${processed} of ${images(total)}`;
  if (reused === undefined || computed === undefined || reused + computed === 0) return base;
  return `${base} (${reused} reused, ${computed} computed)`;
}

/**
 * The summary's sentence on the stored features: what was reused (unchanged, not read again), what was computed
 * (new, changed, or kept from another detector or model version), and what was dropped with deleted images.
 * '' when the server did not say.
 */
export function featuresText(f: TrainFeatures | undefined): string {
  if (!f) return '';
  const parts: string[] = [];
  if (f.reused > 0 && f.computed === 0) {
    parts.push(`${all(f.reused)} reused: nothing had changed, so no photo was read again.`);
  } else if (f.reused === 0 && f.computed > 0) {
    parts.push(`${all(f.computed)} computed (new, changed or made with another version).`);
  } else if (f.reused > 0) {
    parts.push(
      `${images(f.reused)} reused (unchanged since they were last read), ${f.computed} computed (new, changed or made with another version).`,
    );
  }
  if (f.removed > 0) parts.push(`Dropped what was kept of ${images(f.removed)} no longer stored.`);
  return parts.join(' ');
}

/** The work behind "computed", for the curious: face detections, LBPH histograms, descriptors. '' when none. */
export function computedWorkText(f: TrainFeatures | undefined): string {
  if (!f || f.detections + f.histograms + f.descriptors === 0) return '';
  const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  return `Computed: ${count(f.detections, 'face detection', 'face detections')}, ${count(f.histograms, 'LBPH histogram', 'LBPH histograms')}, ${count(f.descriptors, 'face descriptor', 'face descriptors')}.`;
}
