/**
 * The demo tour's choices (scripts/demo/plan.ts, scripts/demo/caption.ts): it shows only what the toured server can
 * do, ends on the person named live, and puts each caption where it covers nothing it describes.
 */
import { describe, expect, it } from 'vitest';
import { overlapArea, placeCaption } from '../../scripts/demo/caption.js';
import { groupPhotoFor, planTour } from '../../scripts/demo/plan.js';

describe('planTour', () => {
  it('leaves out Safety and Chat when the server has no PPE detector and no language model', () => {
    const steps = planTour({ remoteDetection: true, safety: false, chat: false });
    expect(steps).toEqual(['dashboard', 'training-photos', 'training-done', 'group-photo', 'objects', 'recognize-live']);
  });

  it('shows Safety and Chat where they work, and still ends on the person named live', () => {
    const steps = planTour({ remoteDetection: false, safety: true, chat: true });
    expect(steps).toContain('safety');
    expect(steps).toContain('chat');
    expect(steps.at(-1)).toBe('recognize-live');
    expect(planTour({ remoteDetection: false, safety: false, chat: true })).not.toContain('safety');
  });

  it('finds the group photo’s faces on the model server when one is connected, else with the cascade', () => {
    expect(groupPhotoFor({ remoteDetection: true }).detection).toBe('remote');
    expect(groupPhotoFor({ remoteDetection: false }).detection).toBe('local');
  });
});

describe('placeCaption', () => {
  const viewport = { width: 1280, height: 800 };
  const size = { width: 460, height: 140 };

  it('takes the bottom right corner when nothing is there', () => {
    const { rect, covered } = placeCaption(size, viewport, [{ x: 80, y: 80, width: 600, height: 400 }], 56);
    expect(covered).toBe(0);
    expect(rect).toEqual({ x: 1280 - 460 - 16, y: 800 - 140 - 16, ...size });
  });

  it('moves off a subject in the bottom right (a training summary, face cards) to a free corner', () => {
    const summary = { x: 760, y: 180, width: 440, height: 600 };
    const cards = { x: 80, y: 560, width: 640, height: 200 };
    const { rect, covered } = placeCaption(size, viewport, [summary, cards], 56);
    expect(covered).toBe(0);
    expect(overlapArea(rect, summary) + overlapArea(rect, cards)).toBe(0);
    expect(rect.y).toBe(56 + 16); // a top corner, under the header
  });

  it('covers as little as it can when every corner is taken, and says how much', () => {
    const everywhere = { x: 0, y: 0, width: 1280, height: 800 };
    expect(placeCaption(size, viewport, [everywhere]).covered).toBe(460 * 140);
  });
});
