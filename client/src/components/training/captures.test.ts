/**
 * The training page's photo tray: a second upload while one runs (Train pressed during Save's uploads) waits for
 * the first and answers only once every photo is stored. It answered false at once, and the page trained without
 * the photos still on their way (seen in the demo tour: a training on 1 of 3 photos).
 */
import { createRoot } from 'solid-js';
import { describe, expect, it, vi } from 'vitest';
import { isGood, type PhotoCheckResult, type ShownFaceBox } from '../../lib/photo-check';
import type { UploadOutcome } from '../../lib/uploads';
import type { KeptPhoto, TrayKeeper } from '../../pwa/tray-store';
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

/** The tray's store on a device, as a map. */
function memoryKeeper(): TrayKeeper & { kept: Map<string, KeptPhoto> } {
  const kept = new Map<string, KeptPhoto>();
  return {
    kept,
    all: async () => [...kept.values()].sort((a, b) => a.created - b.created),
    put: async (p) => {
      kept.set(p.key, { ...p });
    },
    remove: async (key) => {
      kept.delete(key);
    },
  };
}

describe('photos checked but not saved (#36)', () => {
  it('are kept on the device until saved or removed, and come back, with their decisions, after the page is closed', async () => {
    const keeper = memoryKeeper();
    const faces = [
      { x: 0, y: 0, w: 90, h: 90 },
      { x: 200, y: 0, w: 90, h: 90 },
    ];
    // The second photo has two faces; the others one.
    const check = async (b: Blob, face?: ShownFaceBox): Promise<PhotoCheckResult> =>
      face || b.size !== 2
        ? { verdict: 'ok', detail: '', faces: face ? faces : faces.slice(0, 1) }
        : { verdict: 'several_faces', detail: '', faces };
    const sent: string[] = [];
    const send = async (label: string, blob: Blob): Promise<UploadOutcome> => {
      sent.push(`${label}:${blob.size}`);
      return { state: 'stored', label };
    };
    const grace = { name: 'Grace', label: 'grace' };
    // The first visit: three photos, one face picked, one removed; then the browser closes.
    await createRoot(async (dispose) => {
      const captures = createCaptures(check, send, keeper);
      for (const size of [1, 2, 3]) captures.add(new Blob([new Uint8Array(size)]), 'file', `${size}.jpg`, grace);
      await waitUntil(() => captures.items.every((x) => x.check.state === 'done'));
      captures.pickFace(captures.items[1].id, faces[1]);
      captures.remove(captures.items[2].id);
      await waitUntil(() => keeper.kept.size === 2);
      dispose();
    });
    expect([...keeper.kept.values()].map((k) => [k.originalName, k.label, k.face ?? null])).toEqual([
      ['1.jpg', 'grace', null],
      ['2.jpg', 'grace', faces[1]],
    ]);
    // The next visit: both come back, for the same person, the face still picked; saved, they are forgotten.
    await createRoot(async (dispose) => {
      const captures = createCaptures(check, send, keeper);
      expect(await captures.restore()).toBe(2);
      expect(captures.items.map((x) => [x.originalName, x.label, x.status])).toEqual([
        ['1.jpg', 'grace', 'new'],
        ['2.jpg', 'grace', 'new'],
      ]);
      expect(captures.items[1].face).toEqual(faces[1]);
      await waitUntil(() => captures.items.every((x) => x.check.state === 'done'));
      expect(await captures.upload(grace)).toBe(true);
      expect(sent).toEqual(['grace:1', 'grace:2']);
      await waitUntil(() => keeper.kept.size === 0);
      expect(await captures.restore()).toBe(0);
      dispose();
    });
  });
});

async function waitUntil(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(done()).toBe(true);
}
