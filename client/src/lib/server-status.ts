/**
 * What the server says about itself, kept current for every page: readiness (the dashboard's indicators) and
 * the labels with their image counts. Polled every few seconds while the tab is visible; pages call
 * `refreshStatus()` after a change so the dashboard never shows stale numbers.
 */
import { createRoot, createSignal } from 'solid-js';
import type { LabelsResponse, ReadyResponse } from '../../../shared/api/index';
import { api, ApiFailure } from './api';

export const STATUS_POLL_MS = 3000;

export interface ServerStatus {
  ready: () => ReadyResponse | null;
  labels: () => LabelsResponse | null;
  /** null until the first answer; false while the server cannot be reached. */
  reachable: () => boolean | null;
  error: () => string;
  updatedAt: () => Date | null;
}

let refreshNow: () => Promise<void> = async () => undefined;

export const serverStatus: ServerStatus = createRoot(() => {
  const [ready, setReady] = createSignal<ReadyResponse | null>(null);
  const [labels, setLabels] = createSignal<LabelsResponse | null>(null);
  const [reachable, setReachable] = createSignal<boolean | null>(null);
  const [error, setError] = createSignal('');
  const [updatedAt, setUpdatedAt] = createSignal<Date | null>(null);
  let running: Promise<void> | null = null;

  const poll = async () => {
    try {
      const [r, l] = await Promise.all([api.ready(), api.labels()]);
      setReady(r);
      setLabels(l);
      setReachable(true);
      setError('');
      setUpdatedAt(new Date());
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

  return { ready, labels, reachable, error, updatedAt };
});

/** Ask the server again now (after an upload, a training, a model change). */
export function refreshStatus(): Promise<void> {
  return refreshNow();
}
