/**
 * Sends what was queued offline (queue.ts) once the server answers again: when the app starts, when the
 * browser comes back online, when the server-status poll sees the server again, and every SYNC_INTERVAL_MS
 * while anything is waiting. Training images go first, one at a time, then results in batches, oldest first
 * (drain.ts has the rules, tested on their own).
 * An item leaves the queue only after the server's 2xx (a `duplicate: true` answer counts: it has it), so a
 * crash or a lost answer never loses one, and the dedup ids (capture_id, result id) keep a resend from
 * storing it twice. One tab syncs at a time (Web Locks); the others follow the counts. What is queued of people
 * deleted on the server since is dropped first (deletions.ts).
 */
import { createEffect, createRoot, createSignal, on } from 'solid-js';
import { refreshStatus, serverStatus } from '../lib/server-status';
import { queue, storageProblem } from './queue';
import { ApiFailure } from '../lib/api';
import { isRetryable, postCapture, postResults } from './transport';
import { drainQueues } from './drain';
import { dropDeleted, fetchDeletions } from './deletions';

export const SYNC_INTERVAL_MS = 10_000;
const LOCK_NAME = 'lookout-offline-sync';
const CHANNEL_NAME = 'lookout-offline';

export interface SyncState {
  /** Training images waiting to be sent. */
  pendingCaptures: () => number;
  /** Recognition/detection results waiting to be sent. */
  pendingResults: () => number;
  /** True while this tab is sending. */
  syncing: () => boolean;
  /** Why the last attempt stopped before the queue was empty ('' when it emptied it). */
  lastError: () => string;
  /** Items the server refused (so dropped: resending cannot help), in words, newest last; until dismissed. */
  refused: () => string[];
  lastSyncedAt: () => Date | null;
  /** False until the queues have been counted once (the status shows nothing rather than a wrong "All synced"). */
  counted: () => boolean;
}

const [pendingCaptures, setPendingCaptures] = createSignal(0);
const [pendingResults, setPendingResults] = createSignal(0);
const [syncing, setSyncing] = createSignal(false);
const [lastError, setLastError] = createSignal('');
const [refused, setRefused] = createSignal<string[]>([]);
const [lastSyncedAt, setLastSyncedAt] = createSignal<Date | null>(null);
const [counted, setCounted] = createSignal(false);

export const syncState: SyncState = { pendingCaptures, pendingResults, syncing, lastError, refused, lastSyncedAt, counted };

export function dismissRefused(): void {
  setRefused([]);
}

/** Records a problem a person should hear about (also used by results.ts when nothing could be stored). */
export function reportProblem(message: string): void {
  setRefused((list) => [...list.slice(-4), message]);
}

let channel: BroadcastChannel | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
let running: Promise<void> | null = null;
let started = false;

const pending = () => pendingCaptures() + pendingResults();

async function updateCounts(): Promise<void> {
  try {
    const [c, r] = await Promise.all([queue.countCaptures(), queue.countResults()]);
    setPendingCaptures(c);
    setPendingResults(r);
    setCounted(true);
  } catch (err) {
    setLastError(storageProblem(err));
  }
}

/** Another tab (or this one) changed the queue: recount, and keep the timer going while anything waits. */
async function changed(broadcast: boolean): Promise<void> {
  await updateCounts();
  if (broadcast) channel?.postMessage('changed');
  schedule();
}

function schedule(): void {
  clearTimeout(timer);
  timer = undefined;
  if (pending() > 0) timer = setTimeout(() => void syncNow(), SYNC_INTERVAL_MS);
}

/** Empties the queues as far as the server lets it (drain.ts has the rules). */
async function drain(): Promise<void> {
  await updateCounts();
  if (pending() === 0) {
    setLastError('');
    return;
  }
  setSyncing(true);
  const stats = { stored: 0 };
  try {
    // People deleted on the server: what is queued of them (made before the deletion) is never sent.
    const deletions = await fetchDeletions();
    if (deletions) {
      const dropped = await dropDeleted(queue, deletions);
      const n = dropped.captures + dropped.results;
      if (n > 0) {
        reportProblem(
          `${n} ${n === 1 ? 'item' : 'items'} waiting offline named people deleted on the server, and ${n === 1 ? 'was' : 'were'} dropped.`,
        );
        await changed(true);
      }
    }
    const outcome = await drainQueues(
      {
        queue,
        postCapture,
        postResults,
        isRetryable,
        isUnreachable: (err) => err instanceof ApiFailure && err.unreachable,
        changed: () => changed(true),
        refused: reportProblem,
      },
      stats,
    );
    setLastError(outcome.error);
    if (outcome.finished) setLastSyncedAt(new Date());
  } finally {
    if (stats.stored > 0) void refreshStatus(); // the dashboard's image counts
  }
}

async function runExclusive(): Promise<void> {
  try {
    if (navigator.locks) {
      // ifAvailable: when another tab is already sending, leave it to that tab.
      await navigator.locks.request(LOCK_NAME, { ifAvailable: true }, async (lock) => {
        if (lock) await drain();
      });
    } else {
      await drain();
    }
  } catch (err) {
    setLastError(storageProblem(err));
  } finally {
    setSyncing(false);
    await updateCounts();
    schedule();
  }
}

/** Sends what is waiting now (one run at a time; a call during a run joins it). */
export function syncNow(): Promise<void> {
  running ??= runExclusive().finally(() => {
    running = null;
  });
  return running;
}

let soon: ReturnType<typeof setTimeout> | undefined;

/** Sends within `delayMs`: results arrive several a second, and one request can carry many of them. */
export function syncSoon(delayMs = 1000): void {
  if (soon !== undefined) return;
  soon = setTimeout(() => {
    soon = undefined;
    void syncNow();
  }, delayMs);
}

/** Something was just queued: count it and try again after the usual wait (the server was just unreachable). */
export function queuedOne(): Promise<void> {
  return changed(true);
}

/** Starts the sync loop (once): at start-up, on `online`, when the server answers again, and on a timer. */
export function startSync(): void {
  if (started) return;
  started = true;
  if (typeof BroadcastChannel !== 'undefined') {
    channel = new BroadcastChannel(CHANNEL_NAME);
    channel.onmessage = () => void changed(false);
  }
  window.addEventListener('online', () => void syncNow());
  createRoot(() => {
    // The status poll (every few seconds) notices the server first: sync then, not at the next 10 s tick.
    createEffect(
      on(serverStatus.reachable, (now, before) => {
        if (now === true && before === false && pending() > 0) void syncNow();
      }),
    );
  });
  void syncNow();
}
