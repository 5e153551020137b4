/**
 * The photos taken so far, numbered as a person counts them, each with its upload status and the one action
 * that fits it: remove (not sent yet), retry (the upload failed, with the server's reason).
 */
import { For, Match, Show, Switch } from 'solid-js';
import type { CaptureItem, Captures } from './captures';

const STATUS_TEXT: Record<CaptureItem['status'], string> = {
  new: 'Not saved yet',
  uploading: 'Saving…',
  stored: 'Saved',
  queued: 'Kept on this device',
  failed: 'Not saved',
};

const STATUS_TONE: Record<CaptureItem['status'], string> = {
  new: 'off',
  uploading: 'warn',
  stored: 'ok',
  queued: 'warn',
  failed: 'error',
};

export function CaptureTray(props: { captures: Captures; onRetry: (id: number) => void }) {
  return (
    <ol class="training-tray" aria-label="Photos taken" data-testid="capture-tray">
      <For each={props.captures.items}>
        {(item, i) => (
          <li class="training-thumb" data-testid="capture-thumb" data-status={item.status}>
            <img src={item.url} alt={`Capture ${i() + 1}${item.source === 'file' ? ' (from a file)' : ''}`} />
            <div class="training-thumb-body">
              <span class="training-thumb-name">Image {i() + 1}</span>
              <span class={`chip chip-${STATUS_TONE[item.status]}`} data-testid="capture-status">
                {STATUS_TEXT[item.status]}
              </span>
              <Show when={item.status === 'stored' && item.label}>
                <span class="muted training-thumb-note">as {item.label}</span>
              </Show>
              <Show when={item.status === 'queued'}>
                <span class="muted training-thumb-note">sent when the server is back</span>
              </Show>
              <Show when={item.status === 'failed' && item.error}>
                <span class="training-thumb-error">{item.error}</span>
              </Show>
              <Switch>
                <Match when={item.status === 'new'}>
                  <button
                    type="button"
                    class="secondary small"
                    aria-label={`Remove image ${i() + 1}`}
                    onClick={() => props.captures.remove(item.id)}
                  >
                    Remove
                  </button>
                </Match>
                <Match when={item.status === 'failed'}>
                  <div class="row">
                    <button type="button" class="small" aria-label={`Retry image ${i() + 1}`} onClick={() => props.onRetry(item.id)}>
                      Retry
                    </button>
                    <button
                      type="button"
                      class="secondary small"
                      aria-label={`Remove image ${i() + 1}`}
                      onClick={() => props.captures.remove(item.id)}
                    >
                      Remove
                    </button>
                  </div>
                </Match>
              </Switch>
            </div>
          </li>
        )}
      </For>
    </ol>
  );
}
