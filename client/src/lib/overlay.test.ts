import { describe, expect, it } from 'vitest';
import { fitText, LABEL_MAX_CSS_PX, LABEL_MIN_CSS_PX, labelPx } from './overlay';

/** The label's height on screen, in CSS pixels. */
const onScreen = (width: number, shown: number) => (labelPx(width, shown) * shown) / width;

describe('labelPx', () => {
  it('keeps labels at least 12 CSS pixels on a phone, however large the picture', () => {
    // A 1920-pixel photo and a 1280-pixel camera frame shown 360 CSS pixels wide: about 7 px before.
    for (const width of [640, 1280, 1920, 4000]) {
      expect(onScreen(width, 360)).toBeGreaterThanOrEqual(LABEL_MIN_CSS_PX - 0.5 * (360 / width));
      expect(onScreen(width, 360)).toBeLessThan(LABEL_MIN_CSS_PX + 1);
    }
  });

  it('grows with the picture as shown, up to a limit', () => {
    expect(onScreen(640, 640)).toBeCloseTo(14, 0);
    expect(onScreen(1280, 800)).toBeGreaterThan(onScreen(1280, 640));
    expect(onScreen(1920, 3000)).toBeLessThanOrEqual(LABEL_MAX_CSS_PX + 0.5);
  });

  it('takes a canvas not laid out yet as shown at its own size', () => {
    expect(labelPx(640, 0)).toBe(14);
    expect(labelPx(1920, 0)).toBe(LABEL_MAX_CSS_PX);
  });
});

describe('fitText', () => {
  /** Ten pixels a character. */
  const measure = (t: string) => t.length * 10;

  it('keeps a text that fits, and cuts one that does not with an ellipsis (#36)', () => {
    expect(fitText('Ada 87%', 70, measure)).toBe('Ada 87%');
    expect(fitText('probably Albert Einstein 64%', 130, measure)).toBe('probably Alb…');
    expect(fitText('probably Albert Einstein 64%', 5, measure)).toBe('…');
  });
});
