/**
 * The training page's photo tray: a second upload while one runs (Train pressed during Save's uploads) waits for
 * the first and answers only once every photo is stored. It answered false at once, and the page trained without
 * the photos still on their way (seen in the demo tour: a training on 1 of 3 photos).
 */
import { createRoot } from 'solid-js';
import { describe, expect, it, vi } from 'vitest';
import { isGood, type PhotoCheckResult, type ShownFaceBox } from '../../lib/photo-check';
import type { UploadOutcome } from '../../lib/uploads';
import { createCaptures, heldBecause, shownCheck } from './captures';

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

describe('captures.pickFace', () => {
  it('checks the picked face on its own, so the photo shows before saving what is stored with it (#36)', async () => {
    const faces = [
      { x: 0, y: 0, w: 90, h: 90 },
      { x: 200, y: 0, w: 90, h: 90 },
    ];
    const asked: (ShownFaceBox | undefined)[] = [];
    const check = async (_blob: Blob, face?: ShownFaceBox): Promise<PhotoCheckResult> => {
      asked.push(face);
      return face ? { verdict: 'blurred', detail: '', faces } : { verdict: 'several_faces', detail: '', faces };
    };
    await createRoot(async (dispose) => {
      const captures = createCaptures(check);
      captures.add(new Blob([new Uint8Array(3)]), 'file', 'two.jpg', { name: 'Grace', label: 'grace' });
      await waitUntil(() => captures.items[0].check.state === 'done');
      expect(heldBecause(captures.items[0])).toBe('pick_face');
      captures.pickFace(captures.items[0].id, faces[1]);
      await waitUntil(() => captures.items[0].pickCheck !== undefined);
      expect(asked).toEqual([undefined, faces[1]]);
      // The picked face's own verdict: a problem now, as after saving; and no longer held for a pick.
      expect(shownCheck(captures.items[0])?.verdict).toBe('blurred');
      expect(isGood(shownCheck(captures.items[0]), true)).toBe(false);
      expect(heldBecause(captures.items[0])).toBeNull();
      dispose();
    });
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(done()).toBe(true);
}
