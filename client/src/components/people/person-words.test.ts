import { describe, expect, it } from 'vitest';
import { actionDoneText, mergePreviewText, nearnessText, retrainText, whereText } from './person-words';

describe("a person's page words", () => {
  it('says what each action did, with the counts of a merge and a move', () => {
    expect(actionDoneText({ kind: 'rename', display_name: 'Grace B. Hopper' }, 'Grace Hopper')).toBe(
      'Grace Hopper is now called Grace B. Hopper',
    );
    expect(
      actionDoneText({ kind: 'merge', display_name: 'Grace Hopper', moved: { photos: 2, sightings: 1, corrections: 0 } }, 'G Hopper'),
    ).toBe('G Hopper merged into Grace Hopper: 2 photos and 1 sighting moved');
    expect(actionDoneText({ kind: 'move', display_name: 'Ada', moved: { photos: 1, sightings: 0, corrections: 0 } }, 'Grace')).toBe(
      '1 photo of Grace moved to Ada',
    );
  });

  it('asks for a training only when the models must change', () => {
    expect(retrainText({ kind: 'rename', retrain_needed: false })).toBe('');
    expect(retrainText({ kind: 'merge', retrain_needed: true })).toContain('trained again');
    expect(retrainText({ kind: 'merge', retrain_needed: false })).toBe('');
    expect(retrainText({ kind: 'move', retrain_needed: true })).toContain('trained again');
  });

  it('says where a face was seen and how near a found face is', () => {
    expect(whereText('camera', 'door')).toBe('a camera (door)');
    expect(whereText('page', null)).toBe('a photo on a Lookout page');
    expect(nearnessText(0.2, 0.6)).toBe('very close');
    expect(nearnessText(0.45, 0.6)).toBe('close');
    expect(nearnessText(0.59, 0.6)).toBe('near the limit');
    expect(nearnessText(0.1, 0)).toBe('');
  });

  it('says what a merge will do before it is done', () => {
    expect(mergePreviewText('G Hopper', 'Grace Hopper', 1, 3)).toBe(
      'All 1 photo and 3 sightings of G Hopper go to Grace Hopper, and G Hopper is no longer listed. You can undo this.',
    );
  });
});
