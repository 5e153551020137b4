/**
 * The photos a person has taken or picked on the training page, before and while they are stored. Photos stay
 * in the browser until the person saves them (the API can delete a whole label but not one image, so a bad
 * shot must be removable before it is sent). Each keeps its own status, so one failed upload can be retried.
 */
import { onCleanup } from 'solid-js';
import { createStore, produce } from 'solid-js/store';
import { ApiFailure } from '../../lib/api';
import { uploadTrainingImage } from '../../lib/uploads';

export type CaptureStatus = 'new' | 'uploading' | 'stored' | 'queued' | 'failed';

export interface CaptureItem {
  id: number;
  blob: Blob;
  /** Object URL of the blob, for the thumbnail. */
  url: string;
  source: 'camera' | 'file';
  status: CaptureStatus;
  /** Why the last upload failed, in words. */
  error?: string;
  /** The label it was stored under (the name may change after). */
  label?: string;
}

/** More than this in one batch is a mistake (a held key, a folder picked by accident), not a better model. */
export const MAX_BATCH = 20;

export interface Captures {
  items: CaptureItem[];
  add(blob: Blob, source: CaptureItem['source']): boolean;
  remove(id: number): void;
  /** Drops the stored ones from the tray (they stay on the server). */
  clearStored(): void;
  /** Uploads every photo that is not stored yet (or only `ids`), one at a time; true when all are stored. */
  upload(label: string, ids?: number[]): Promise<boolean>;
  unsent(): CaptureItem[];
  /** Kept on this device by the offline queue, waiting for the server. */
  queued(): CaptureItem[];
  /** The offline queue has sent everything: the queued ones are on the server now. */
  markQueuedSent(): void;
  busy(): boolean;
}

export function createCaptures(): Captures {
  const [items, setItems] = createStore<CaptureItem[]>([]);
  let nextId = 1;
  let uploading = false;

  const patch = (id: number, change: Partial<CaptureItem>) =>
    setItems(
      (it) => it.id === id,
      produce((it) => Object.assign(it, change)),
    );

  onCleanup(() => {
    for (const it of items) URL.revokeObjectURL(it.url);
  });

  return {
    items,
    add(blob, source) {
      if (items.length >= MAX_BATCH) return false;
      setItems(items.length, { id: nextId++, blob, url: URL.createObjectURL(blob), source, status: 'new' });
      return true;
    },
    remove(id) {
      const it = items.find((x) => x.id === id);
      if (!it || it.status === 'uploading') return;
      URL.revokeObjectURL(it.url);
      setItems((list) => list.filter((x) => x.id !== id));
    },
    clearStored() {
      for (const x of items) if (x.status === 'stored') URL.revokeObjectURL(x.url);
      setItems((list) => list.filter((x) => x.status !== 'stored'));
    },
    unsent: () => items.filter((x) => x.status === 'new' || x.status === 'failed'),
    queued: () => items.filter((x) => x.status === 'queued'),
    markQueuedSent() {
      setItems((it) => it.status === 'queued', 'status', 'stored');
    },
    busy: () => items.some((x) => x.status === 'uploading'),
    async upload(label, ids) {
      if (uploading) return false;
      uploading = true;
      try {
        const todo = items.filter((x) => (x.status === 'new' || x.status === 'failed') && (!ids || ids.includes(x.id))).map((x) => x.id);
        // One at a time: the server decodes each image fully, and a phone's uplink is slow anyway.
        for (const id of todo) {
          patch(id, { status: 'uploading', error: undefined });
          try {
            const outcome = await uploadTrainingImage(label, items.find((x) => x.id === id)!.blob);
            patch(id, { status: outcome.state, label: outcome.label });
          } catch (err) {
            patch(id, { status: 'failed', error: sentence(err instanceof ApiFailure || err instanceof Error ? err.message : String(err)) });
          }
        }
        return items.every((x) => x.status === 'stored' || x.status === 'queued');
      } finally {
        uploading = false;
      }
    },
  };
}

/** "the image is too large" -> "The image is too large.": messages come from more than one client path. */
function sentence(text: string): string {
  const t = text.trim();
  const s = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}
