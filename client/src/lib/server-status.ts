/**
 * The one source of truth for what the server says about itself, shared by every page: readiness (the dashboard's
 * indicators) and the labels with their image counts. Polled every few seconds while the tab is visible; every
 * change a page makes (upload, delete, train, sync, a model change) calls `refreshStatus()` so no page shows a
 * stale state. The last answer is kept on this device (localStorage) with its time, so offline, and on a start
 * without the server, pages show the last known state and its age instead of "Loading…".
 */
import { createRoot, createSignal } from 'solid-js';
import type { LabelsResponse, ReadyResponse } from '../../../shared/api/index';
import { api, ApiFailure } from './api';

export const STATUS_POLL_MS = 3000;
const STORE_KEY = 'lookout.server-state';

export interface ServerStatus {
  ready: () => ReadyResponse | null;
  labels: () => LabelsResponse | null;
  /** null until the first answer; false while the server cannot be reached. */
  reachable: () => boolean | null;
  error: () => string;
  /** When `ready` and `labels` were last answered (this session, or a stored answer from an earlier one). */
  updatedAt: () => Date | null;
  /** Goes up each time the labels (people, image counts, trained flags) change: lists of people refetch on it. */
  labelsChanged: () => number;
}

interface Stored {
  ready: ReadyResponse;
  labels: LabelsResponse;
  at: string;
}

function readStored(): Stored | null {
  try {
    const s = JSON.parse(localStorage.getItem(STORE_KEY) ?? 'null') as Stored | null;
    return s?.ready && s.labels && s.at ? s : null;
  } catch {
    return null; // storage blocked or an old shape: start without
  }
}

let refreshNow: () => Promise<void> = async () => undefined;

export const serverStatus: ServerStatus = createRoot(() => {
  const stored = readStored();
  const [ready, setReady] = createSignal<ReadyResponse | null>(stored?.ready ?? null);
  const [labels, setLabels] = createSignal<LabelsResponse | null>(stored?.labels ?? null);
  const [reachable, setReachable] = createSignal<boolean | null>(null);
  const [error, setError] = createSignal('');
  const [updatedAt, setUpdatedAt] = createSignal<Date | null>(stored ? new Date(stored.at) : null);
  const [labelsChanged, setLabelsChanged] = createSignal(0);
  let labelsJson = stored ? JSON.stringify(stored.labels) : '';
  let running: Promise<void> | null = null;

  const poll = async () => {
    try {
      const [r, l] = await Promise.all([api.ready(), api.labels()]);
      const at = new Date();
      setReady(r);
      const json = JSON.stringify(l);
      if (json !== labelsJson) {
        labelsJson = json;
        setLabels(l);
        setLabelsChanged((n) => n + 1);
      }
      setReachable(true);
      setError('');
      setUpdatedAt(at);
      try {
        localStorage.setItem(STORE_KEY, JSON.stringify({ ready: r, labels: l, at: at.toISOString() } satisfies Stored));
      } catch {
        // storage full or blocked: the state is still current in memory
      }
    } catch (err) {
      setReachable(false);
      setError(err instanceof ApiFailure ? err.message : String(err));
    }
  };
  refreshNow = () => (running ??= poll().finally(() => (running = null)));

  void refreshNow();
  setInterval(() => {
    if (document.visibilityState === 'visible') void refreshNow();
  }, STATUS_POLL_MS);
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') void refreshNow();
  });
  window.addEventListener('online', () => void refreshNow());

  return { ready, labels, reachable, error, updatedAt, labelsChanged };
});

/**
 * Ask the server again now (after an upload, a delete, a training, a sync, a model change). A refresh already under
 * way may have read the state before the change: wait for it, then ask once more.
 */
export async function refreshStatus(): Promise<void> {
  await refreshNow();
  await refreshNow();
}

/** "just now", "2 minutes ago", "3 hours ago", "2 days ago": the age of a known state. */
export function ageText(since: Date, now: Date = new Date()): string {
  const s = Math.max(0, Math.round((now.getTime() - since.getTime()) / 1000));
  const unit = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'} ago`;
  if (s < 60) return 'just now';
  if (s < 3600) return unit(Math.floor(s / 60), 'minute');
  if (s < 86_400) return unit(Math.floor(s / 3600), 'hour');
  return unit(Math.floor(s / 86_400), 'day');
}
