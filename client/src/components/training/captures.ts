/**
 * The photos a person has taken or picked on the training page, before and while they are stored. Photos stay
 * in the browser until the person saves them (a bad shot can be removed before it is sent). Each keeps its own
 * status, so one failed upload can be retried, and the name it was taken under: typing another name later
 * starts photos for that person, it never moves these (only "move" does, when asked). Each photo is checked
 * when it is added (faces, size, sharpness, light: lib/photo-check.ts); a photo without a face, or with
 * several and none picked, waits for the person's decision instead of being saved.
 */
import { onCleanup } from 'solid-js';
import { createStore, produce } from 'solid-js/store';
import { ApiFailure } from '../../lib/api';
import type { PhotoCheckResult, ShownFaceBox } from '../../lib/photo-check';
import { checkTrainingPhoto, uploadTrainingImage } from '../../lib/uploads';
import { type KeptPhoto, type TrayKeeper, trayStore } from '../../pwa/tray-store';

export type CaptureStatus = 'new' | 'uploading' | 'stored' | 'queued' | 'failed';

/** The photo's check: running, its answer, or why there is none (server away, an older server). */
export type CaptureCheck = { state: 'checking' } | { state: 'done'; result: PhotoCheckResult } | { state: 'unchecked'; why: string };

/** A name as typed ("Marie Curie", trimmed) and the label the server stores it under (`marie-curie`). */
export interface PersonName {
  name: string;
  label: string;
}

export interface CaptureItem {
  id: number;
  /** Its key in the tray's store on this device (pwa/tray-store.ts), where it is kept until saved or removed. */
  key: string;
  /** When it was added (ms since the epoch). */
  created: number;
  blob: Blob;
  /** Object URL of the blob, for the thumbnail. */
  url: string;
  source: 'camera' | 'file';
  /** The file's own name (`brick.png`), or a made-up one for a camera photo; sent and stored with it. */
  originalName: string;
  status: CaptureStatus;
  /** Why the last upload failed, in words. */
  error?: string;
  /**
   * The person it is for: the name typed when it was taken (none when no name was typed yet: it takes the
   * name in the field when it is saved). Once stored, `label` is the server's.
   */
  name?: string;
  label?: string;
  check: CaptureCheck;
  /** The face the person picked, in a photo with several. */
  face?: ShownFaceBox;
  /**
   * The check of the picked face itself (`POST /api/images/check` with `face`): what is stored with the photo when
   * it is saved. Without it a picked face read "Face picked" before saving and "Blurred" after.
   */
  pickCheck?: PhotoCheckResult;
  /** Saved even though no face was found (the person decided). */
  keepAnyway?: boolean;
}

/** More than this in one batch is a mistake (a held key, a folder picked by accident), not a better model. */
export const MAX_BATCH = 20;

/** The check shown for a photo: its picked face's own once there is one, else the photo's (undefined: none yet). */
export function shownCheck(item: CaptureItem): PhotoCheckResult | undefined {
  if (item.face && item.pickCheck) return item.pickCheck;
  return item.check.state === 'done' ? item.check.result : undefined;
}

/** Why an unsent photo is not saved yet (null: it can be). */
export function heldBecause(item: CaptureItem): 'pick_face' | 'no_face' | null {
  if (item.check.state !== 'done') return null;
  const v = item.check.result.verdict;
  if (v === 'several_faces' && !item.face) return 'pick_face';
  if (v === 'no_face' && !item.keepAnyway) return 'no_face';
  return null;
}

export interface Captures {
  items: CaptureItem[];
  /** Adds a photo taken under `person` (none: no valid name yet); false when the batch is full. */
  add(blob: Blob, source: CaptureItem['source'], originalName: string, person?: PersonName): boolean;
  remove(id: number): void;
  /** Drops the stored ones from the tray (they stay on the server). */
  clearStored(): void;
  /** Gives the photos taken before any name was typed this name (they were taken for it). */
  adopt(person: PersonName): void;
  /** Moves the unsaved photos of `fromLabel` to another person: only when the person asks for it. */
  move(fromLabel: string, to: PersonName): void;
  pickFace(id: number, face: ShownFaceBox): void;
  keepAnyway(id: number): void;
  /**
   * Uploads every photo that is not stored yet (or only `ids`), one at a time, each under its own name (a photo
   * without one under `fallback`), after its check; photos held for a decision stay. True when all sent are stored.
   */
  upload(fallback: PersonName | undefined, ids?: number[]): Promise<boolean>;
  /** Not stored yet, and not held (checks still running count: they are awaited when saving). */
  unsent(): CaptureItem[];
  /** Not stored yet, waiting for the person's decision (pick a face, or keep a photo with no face). */
  held(): CaptureItem[];
  /** Kept on this device by the offline queue, waiting for the server. */
  queued(): CaptureItem[];
  /** The offline queue has sent everything: the queued ones are on the server now. */
  markQueuedSent(): void;
  busy(): boolean;
  /** Resolves once no upload runs (at once when none does). */
  idle(): Promise<void>;
  /** Brings back the photos kept on this device from an earlier visit (checked again); how many came back. */
  restore(): Promise<number>;
}

/** A key for a photo kept on this device (random: two tabs add photos at once). */
function newKey(): string {
  return typeof crypto !== 'undefined' && 'randomUUID' in crypto
    ? crypto.randomUUID()
    : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
}

function cameraName(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `camera-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}.jpg`;
}

export function createCaptures(
  check: (blob: Blob, face?: ShownFaceBox) => Promise<PhotoCheckResult> = checkTrainingPhoto,
  send: typeof uploadTrainingImage = uploadTrainingImage,
  keeper: TrayKeeper = trayStore,
): Captures {
  const [items, setItems] = createStore<CaptureItem[]>([]);
  let nextId = 1;
  // Uploads run one after another: a second call waits for the first (see upload()).
  let uploads: Promise<unknown> = Promise.resolve();
  const checks = new Map<number, Promise<void>>();
  // One check at a time: the server decodes each photo, and a folder of 20 must not be 20 requests at once.
  let checking: Promise<void> = Promise.resolve();

  const isUnsent = (x: CaptureItem) => x.status === 'new' || x.status === 'failed';
  // Kept on this device while unsent (a closed browser lost checked photos, #36); forgotten once saved, queued by the
  // offline queue (which keeps it from then on) or removed.
  const keep = (x: CaptureItem) => {
    if (!isUnsent(x)) return void keeper.remove(x.key);
    const photo: KeptPhoto = { key: x.key, blob: x.blob, source: x.source, originalName: x.originalName, created: x.created };
    if (x.name) photo.name = x.name;
    if (x.label) photo.label = x.label;
    if (x.face) photo.face = { ...x.face };
    if (x.keepAnyway) photo.keepAnyway = true;
    void keeper.put(photo);
  };
  const keepWhere = (which: (x: CaptureItem) => boolean) => {
    for (const x of items) if (which(x)) keep(x);
  };
  const patch = (id: number, change: Partial<CaptureItem>) => {
    setItems(
      (it) => it.id === id,
      produce((it) => Object.assign(it, change)),
    );
    const it = items.find((x) => x.id === id);
    if (it && ('status' in change || 'face' in change || 'keepAnyway' in change || 'label' in change)) keep(it);
  };

  const startCheck = (id: number, blob: Blob) => {
    const run = checking.then(async () => {
      if (!items.some((x) => x.id === id)) return; // removed meanwhile
      try {
        patch(id, { check: { state: 'done', result: await check(blob) } });
      } catch (err) {
        const why =
          err instanceof ApiFailure && (err.unreachable || err.status === 503)
            ? 'Not checked: the server cannot be reached.'
            : err instanceof ApiFailure && (err.status === 404 || err.status === 405)
              ? 'Not checked: this server cannot check photos.'
              : `Not checked: ${err instanceof Error ? err.message : String(err)}`;
        patch(id, { check: { state: 'unchecked', why } });
      }
    });
    checking = run;
    checks.set(id, run);
  };

  onCleanup(() => {
    for (const it of items) URL.revokeObjectURL(it.url);
  });

  /** A photo into the tray (new, or kept from an earlier visit), checked, and kept on this device. */
  const insert = (photo: KeptPhoto) => {
    const id = nextId++;
    setItems(items.length, {
      id,
      key: photo.key,
      created: photo.created,
      blob: photo.blob,
      url: URL.createObjectURL(photo.blob),
      source: photo.source,
      originalName: photo.originalName,
      status: 'new',
      name: photo.name,
      label: photo.label,
      check: { state: 'checking' },
      ...(photo.keepAnyway ? { keepAnyway: true } : {}),
    });
    startCheck(id, photo.blob);
    const added = items.find((x) => x.id === id)!;
    keep(added);
    // A face picked before the page was closed: picked again (and its own check run again).
    if (photo.face) api.pickFace(id, photo.face);
  };

  const api: Captures = {
    items,
    add(blob, source, originalName, person) {
      if (items.length >= MAX_BATCH) return false;
      insert({
        key: newKey(),
        blob,
        source,
        originalName: originalName || cameraName(new Date()),
        created: Date.now(),
        ...(person ? { name: person.name, label: person.label } : {}),
      });
      return true;
    },
    async restore() {
      const kept = (await keeper.all()).filter((k) => !items.some((x) => x.key === k.key));
      const room = Math.max(0, MAX_BATCH - items.length);
      for (const k of kept.slice(0, room)) insert(k);
      return Math.min(kept.length, room);
    },
    remove(id) {
      const it = items.find((x) => x.id === id);
      if (!it || it.status === 'uploading') return;
      URL.revokeObjectURL(it.url);
      checks.delete(id);
      void keeper.remove(it.key);
      setItems((list) => list.filter((x) => x.id !== id));
    },
    clearStored() {
      for (const x of items) if (x.status === 'stored') URL.revokeObjectURL(x.url);
      setItems((list) => list.filter((x) => x.status !== 'stored'));
    },
    adopt(person) {
      const which = (x: CaptureItem) => isUnsent(x) && !x.label;
      const ids = new Set(items.filter(which).map((x) => x.id));
      setItems(
        which,
        produce((x) => Object.assign(x, person)),
      );
      keepWhere((x) => ids.has(x.id));
    },
    move(fromLabel, to) {
      const which = (x: CaptureItem) => isUnsent(x) && x.label === fromLabel;
      const ids = new Set(items.filter(which).map((x) => x.id));
      setItems(
        which,
        produce((x) => Object.assign(x, to)),
      );
      keepWhere((x) => ids.has(x.id));
    },
    pickFace(id, face) {
      patch(id, { face: { ...face }, pickCheck: undefined });
      const it = items.find((x) => x.id === id);
      if (!it) return;
      const blob = it.blob;
      // The picked face checked on its own, after the checks before it; kept only while that face is still the pick.
      checking = checking.then(async () => {
        try {
          const result = await check(blob, face);
          const now = items.find((x) => x.id === id)?.face;
          if (now && now.x === face.x && now.y === face.y && now.w === face.w && now.h === face.h) patch(id, { pickCheck: result });
        } catch {
          // Not checked: the photo's own check (several faces, one picked) stays shown.
        }
      });
    },
    keepAnyway(id) {
      patch(id, { keepAnyway: true });
    },
    unsent: () => items.filter((x) => isUnsent(x) && heldBecause(x) === null),
    held: () => items.filter((x) => isUnsent(x) && heldBecause(x) !== null),
    queued: () => items.filter((x) => x.status === 'queued'),
    markQueuedSent() {
      setItems((it) => it.status === 'queued', 'status', 'stored');
    },
    busy: () => items.some((x) => x.status === 'uploading'),
    idle: () => uploads.then(() => undefined),
    upload(fallback, ids) {
      // Train pressed while Save's uploads run: this call waits for them, then sends what is still unsent, so it
      // never answers before the photos are stored (it answered false at once, and training began without them).
      const run = uploads.then(() => uploadNow(fallback, ids));
      uploads = run.catch(() => undefined);
      return run;
    },
  };
  return api;

  async function uploadNow(fallback: PersonName | undefined, ids?: number[]): Promise<boolean> {
    const wanted = (x: CaptureItem) => isUnsent(x) && (!ids || ids.includes(x.id));
    // A photo still being checked may turn out to need a decision: its check first.
    await Promise.all(items.filter(wanted).map((x) => checks.get(x.id)));
    const todo = items.filter((x) => wanted(x) && heldBecause(x) === null && (x.label || fallback)).map((x) => x.id);
    // One at a time: the server decodes each image fully, and a phone's uplink is slow anyway.
    for (const id of todo) {
      const item = items.find((x) => x.id === id);
      if (!item) continue;
      const person = item.label ? { name: item.name ?? item.label, label: item.label } : fallback!;
      patch(id, { status: 'uploading', error: undefined, ...person });
      try {
        const outcome = await send(person.label, item.blob, {
          display_name: person.name,
          original_name: item.originalName,
          face: item.face ? { ...item.face } : undefined,
        });
        patch(id, { status: outcome.state, label: outcome.label });
      } catch (err) {
        patch(id, { status: 'failed', error: sentence(err instanceof ApiFailure || err instanceof Error ? err.message : String(err)) });
      }
    }
    return todo.every((id) => {
      const s = items.find((x) => x.id === id)?.status;
      return s === 'stored' || s === 'queued' || s === undefined;
    });
  }
}

/** "the image is too large" -> "The image is too large.": messages come from more than one client path. */
function sentence(text: string): string {
  const t = text.trim();
  const s = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}
