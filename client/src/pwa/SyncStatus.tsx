/**
 * The offline queue at a glance, for the header: "3 captures waiting to sync", "Sending 3 captures…" or
 * "All synced"; a "Sync now" button after a failed try, an "Update ready" button when a new version of the
 * app is downloaded, and a dismissable note when the server refused something that was queued.
 */
import { Show } from 'solid-js';
import { serverStatus } from '../lib/server-status';
import { applyUpdate, updateReady } from './register';
import { dismissRefused, syncNow, syncState } from './sync';

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "3 captures and 2 results", or '' when nothing waits. */
export function pendingText(captures: number, results: number): string {
  const parts: string[] = [];
  if (captures > 0) parts.push(count(captures, 'capture', 'captures'));
  if (results > 0) parts.push(count(results, 'result', 'results'));
  return parts.join(' and ');
}

export function SyncStatus() {
  const offline = () => serverStatus.reachable() === false;
  // While the server answers, a kept result is sent within a second: counting it would flash "1 result waiting".
  const results = () => (serverStatus.reachable() !== true || syncState.lastError() ? syncState.pendingResults() : 0);
  const what = () => pendingText(syncState.pendingCaptures(), results());
  const state = () => (!what() ? 'synced' : syncState.syncing() ? 'syncing' : 'waiting');
  const text = () =>
    state() === 'synced'
      ? offline()
        ? 'Nothing waiting to sync'
        : 'All synced'
      : state() === 'syncing'
        ? `Sending ${what()}…`
        : `${what()} waiting to sync`;
  const lastRefusal = () => syncState.refused().at(-1);
  return (
    <Show when={syncState.counted()}>
      <div class="sync-status">
        {/* Offline with nothing queued: a dot of its own, not the green of "All synced" beside "Server unreachable". */}
        <span
          class={`sync-chip sync-${state()}${offline() ? ' sync-offline' : ''}`}
          role="status"
          data-testid="sync-status"
          data-state={offline() && state() === 'synced' ? 'offline' : state()}
          title={syncState.lastError() || undefined}
        >
          <span class="sync-dot" aria-hidden="true" />
          <span class="sync-text">{text()}</span>
        </span>
        <Show when={state() === 'waiting' && syncState.lastError()}>
          <button type="button" class="sync-button" onClick={() => void syncNow()}>
            Sync now
          </button>
        </Show>
        <Show when={updateReady()}>
          <button type="button" class="sync-button" onClick={applyUpdate} title="A new version of Lookout is downloaded: reload to use it">
            Update ready: reload
          </button>
        </Show>
        <Show when={lastRefusal()}>
          <span class="sync-refused" role="alert" title={lastRefusal()}>
            <span class="sync-refused-text">{lastRefusal()}</span>
            <button type="button" class="sync-dismiss" aria-label="Dismiss the sync problem" onClick={dismissRefused}>
              ×
            </button>
          </span>
        </Show>
      </div>
    </Show>
  );
}

export default SyncStatus;
