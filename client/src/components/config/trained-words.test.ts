import { describe, expect, it } from 'vitest';
import { outOfDateText, untrainedPeople } from './trained-words';

describe('a trained model out of date (#36)', () => {
  it('names the people with photos the model does not know', () => {
    const details = [
      { label: 'ada', images: 3, trained: true },
      { label: 'grace', images: 2, trained: false },
      { label: 'nobody-yet', images: 0, trained: false },
    ];
    expect(untrainedPeople(details)).toEqual(['grace']);
    expect(untrainedPeople(details.slice(0, 1))).toEqual([]);
  });

  it('says so in words, and nothing when the model is current', () => {
    expect(outOfDateText([])).toBe('');
    expect(outOfDateText(['Grace Hopper'])).toBe('Out of date: Grace Hopper has photos but is not in it yet. Train again to add them.');
    expect(outOfDateText(['Ada', 'Grace'])).toBe(
      'Out of date: Ada and Grace have photos but are not in it yet. Train again to add them all.',
    );
    expect(outOfDateText(['a', 'b', 'c', 'd'])).toBe(
      'Out of date: 4 people have photos but are not in it yet. Train again to add them all.',
    );
  });
});
