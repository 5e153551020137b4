import { describe, expect, it } from 'vitest';
import { computedWorkText, featuresText, progressText } from './train-words';

const features = (f: Partial<Record<'reused' | 'computed' | 'detections' | 'histograms' | 'descriptors' | 'removed', number>>) => ({
  reused: 0,
  computed: 0,
  detections: 0,
  histograms: 0,
  descriptors: 0,
  removed: 0,
  ...f,
});

describe('training progress words', () => {
  it('counts reused and computed images once the server says and some image is done', () => {
    expect(progressText(0, 0)).toBe('Starting the training…');
    expect(progressText(3, 6)).toBe('Processed 3 of 6 images');
    expect(progressText(0, 6, 0, 0)).toBe('Processed 0 of 6 images');
    expect(progressText(3, 6, 2, 1)).toBe('Processed 3 of 6 images (2 reused, 1 computed)');
    expect(progressText(1, 1, 0, 1)).toBe('Processed 1 of 1 image (0 reused, 1 computed)');
    // An older server: no counts at all.
    expect(progressText(6, 6, undefined, undefined)).toBe('Processed 6 of 6 images');
  });
});

describe('training summary words on stored features', () => {
  it('says nothing when the server did not say', () => {
    expect(featuresText(undefined)).toBe('');
    expect(computedWorkText(undefined)).toBe('');
  });

  it('a first training computes all; a training with nothing changed reuses all', () => {
    expect(featuresText(features({ computed: 6, detections: 6, histograms: 6, descriptors: 6 }))).toBe(
      'All 6 images computed (new, changed or made with another version).',
    );
    expect(featuresText(features({ reused: 1 }))).toBe('The 1 image reused: nothing had changed, so no photo was read again.');
    expect(featuresText(features({ reused: 6 }))).toBe('All 6 images reused: nothing had changed, so no photo was read again.');
    expect(computedWorkText(features({ reused: 6 }))).toBe('');
  });

  it('a training after adding a photo reuses the others and computes the new one; deleted images are dropped', () => {
    const f = features({ reused: 5, computed: 1, detections: 1, histograms: 0, descriptors: 0, removed: 2 });
    expect(featuresText(f)).toBe(
      '5 images reused (unchanged since they were last read), 1 computed (new, changed or made with another version). Dropped what was kept of 2 images no longer stored.',
    );
    expect(computedWorkText(f)).toBe('Computed: 1 face detection, 0 LBPH histograms, 0 face descriptors.');
    expect(featuresText(features({ removed: 1 }))).toBe('Dropped what was kept of 1 image no longer stored.');
  });
});
