/**
 * The training page's photo tray: a second upload while one runs (Train pressed during Save's uploads) waits for
 * the first and answers only once every photo is stored. It answered false at once, and the page trained without
 * the photos still on their way (seen in the demo tour: a training on 1 of 3 photos).
 */
import { createRoot } from 'solid-js';
import { describe, expect, it, vi } from 'vitest';
import type { PhotoCheckResult } from '../../lib/photo-check';
import type { UploadOutcome } from '../../lib/uploads';
import { createCaptures } from './captures';

// The real upload module starts the page's sync and server-status polling when imported: the tray gets its
// check and send functions from the test instead.
vi.mock('../../lib/uploads', () => ({ checkTrainingPhoto: vi.fn(), uploadTrainingImage: vi.fn() }));

const goodPhoto = async (): Promise<PhotoCheckResult> => ({ verdict: 'ok', detail: '', faces: [] });

describe('captures.upload', () => {
  it('a second call while photos are uploading waits for them and answers once all are stored; idle() waits too', async () => {
    const releases: (() => void)[] = [];
    const sent: string[] = [];
    const send = (label: string, blob: Blob) =>
      new Promise<UploadOutcome>((resolve) => {
        releases.push(() => {
          sent.push(`${label}:${blob.size}`);
          resolve({ state: 'stored', label });
        });
      });
    await createRoot(async (dispose) => {
      const captures = createCaptures(goodPhoto, send);
      const grace = { name: 'Grace', label: 'grace' };
      for (const size of [1, 2, 3]) captures.add(new Blob([new Uint8Array(size)]), 'camera', `${size}.jpg`, grace);
      const save = captures.upload(grace);
      await new Promise((r) => setTimeout(r, 0));
      let idle = false;
      void captures.idle().then(() => {
        idle = true;
      });
      let trainMayStart = false;
      const train = captures.upload(grace).then((ok) => {
        trainMayStart = ok;
        return ok;
      });
      // Let the uploads end one by one; the second call must still be waiting until the last is stored.
      for (let i = 0; i < 3; i++) {
        await waitUntil(() => releases.length > i);
        expect(trainMayStart).toBe(false);
        expect(idle).toBe(false);
        releases[i]!();
      }
      expect(await save).toBe(true);
      expect(await train).toBe(true);
      await captures.idle();
      expect(idle).toBe(true);
      expect(sent).toEqual(['grace:1', 'grace:2', 'grace:3']);
      expect(captures.items.map((x) => x.status)).toEqual(['stored', 'stored', 'stored']);
      expect(captures.unsent()).toHaveLength(0);
      dispose();
    });
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(done()).toBe(true);
}
