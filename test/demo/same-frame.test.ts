/**
 * #36: the demo's last caption said "71% match" while its screenshot showed 78% (the text was read a few camera
 * frames before the picture). captureSameFrame (scripts/demo/same-frame.ts) keeps a capture only when the screen
 * read the same before and after it, and the caption is what was read.
 */
import { describe, expect, it } from 'vitest';
import { captureSameFrame } from '../../scripts/demo/same-frame.js';

/** A screen whose words change on each read, as given; records what the caption and the captures showed. */
function screen(reads: string[]) {
  let i = 0;
  let now = reads[0];
  const shown: string[] = [];
  const captured: { caption: string; screen: string }[] = [];
  return {
    shown,
    captured,
    frame: {
      read: async () => {
        now = reads[Math.min(i++, reads.length - 1)];
        return now;
      },
      show: async (text: string) => {
        shown.push(text);
      },
      capture: async () => {
        captured.push({ caption: shown.at(-1) as string, screen: now });
      },
    },
  };
}

describe('captureSameFrame', () => {
  it('a still screen: one capture, the caption is the screen', async () => {
    const s = screen(['Grace Hopper 78% match']);
    expect(await captureSameFrame(s.frame)).toEqual({ text: 'Grace Hopper 78% match', agreed: true });
    expect(s.captured).toEqual([{ caption: 'Grace Hopper 78% match', screen: 'Grace Hopper 78% match' }]);
  });

  it('a frame that changed across the capture is taken again, and the caption follows the screen', async () => {
    // Read 71%, the screen moves to 78% before the read after the capture: taken again at 78%.
    const s = screen(['Grace Hopper 71% match', 'Grace Hopper 78% match', 'Grace Hopper 78% match', 'Grace Hopper 78% match']);
    const kept = await captureSameFrame(s.frame);
    expect(kept).toEqual({ text: 'Grace Hopper 78% match', agreed: true });
    expect(s.captured).toHaveLength(2);
    expect(s.captured.at(-1)).toEqual({ caption: 'Grace Hopper 78% match', screen: 'Grace Hopper 78% match' });
  });

  it('a screen that never holds still: stops after the tries and says so', async () => {
    const reads = Array.from({ length: 20 }, (_, i) => `Grace Hopper ${70 + i}% match`);
    const s = screen(reads);
    const kept = await captureSameFrame(s.frame, 3);
    expect(kept.agreed).toBe(false);
    expect(s.captured).toHaveLength(3);
  });
});
