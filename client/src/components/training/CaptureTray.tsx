/**
 * The photos taken so far, numbered as a person counts them, each with the person it is for, its check (a
 * verdict in a few words: "No face", "Two faces: pick one", "Too small", "Blurred", and the detector that checked it
 * when that is not the local one as selected), its upload status and the
 * actions that fit it: pick a face, keep a photo without a face anyway, remove (not sent yet), retry (the
 * upload failed, with the server's reason).
 */
import { createSignal, For, Match, Show, Switch } from 'solid-js';
import { checkSentence, detectionReason, detectionText, verdictText, verdictTone } from '../../lib/photo-check';
import { type CaptureItem, type Captures, heldBecause, shownCheck } from './captures';
import { FacePicker } from './FacePicker';

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

/** The check as a chip and a sentence. */
function CheckLine(props: { item: CaptureItem }) {
  const c = () => props.item.check;
  const picked = () => !!props.item.face;
  return (
    <Switch>
      <Match when={c().state === 'checking'}>
        <span class="chip chip-off" data-testid="capture-check" data-verdict="checking">
          Checking…
        </span>
      </Match>
      <Match when={c().state === 'unchecked' && (c() as Extract<CaptureItem['check'], { state: 'unchecked' }>)}>
        {(u) => (
          <>
            <span class="chip chip-off" data-testid="capture-check" data-verdict="unchecked">
              Not checked
            </span>
            <span class="muted training-thumb-note">{u().why}</span>
          </>
        )}
      </Match>
      {/* The picked face's own check once it is in (captures.ts shownCheck), else the photo's. */}
      <Match when={c().state === 'done' && shownCheck(props.item)}>
        {(r) => (
          <>
            <span
              class={`chip chip-${verdictTone(r(), picked())}`}
              data-testid="capture-check"
              data-verdict={r().verdict}
              data-detection={r().method}
            >
              {verdictText(r(), picked())}
            </span>
            <Show when={r().verdict !== 'ok'}>
              <span class="muted training-thumb-note" data-testid="capture-check-detail">
                {checkSentence(r(), picked(), props.item.source)}
              </span>
            </Show>
            <Show when={detectionText(r())}>
              {(t) => (
                <>
                  <span class="muted training-thumb-note" data-testid="capture-check-detection" data-detection={r().method}>
                    {t()}
                  </span>
                  {/* The server's reason names the model server's error: long for a thumbnail, so behind a disclosure. */}
                  <Show when={detectionReason(r())}>
                    {(why) => (
                      <details class="muted training-thumb-note" data-testid="capture-check-detection-reason">
                        <summary>Why</summary>
                        {why()}
                      </details>
                    )}
                  </Show>
                </>
              )}
            </Show>
          </>
        )}
      </Match>
    </Switch>
  );
}

export function CaptureTray(props: { captures: Captures; onRetry: (id: number) => void; currentName?: string }) {
  const [picking, setPicking] = createSignal<number | null>(null);
  let returnFocus: HTMLElement | null = null;
  const pickingItem = () => props.captures.items.find((x) => x.id === picking());
  const index = (id: number) => props.captures.items.findIndex((x) => x.id === id) + 1;

  return (
    <>
      <ol class="training-tray" aria-label="Photos taken" data-testid="capture-tray">
        <For each={props.captures.items}>
          {(item, i) => (
            <li class="training-thumb" data-testid="capture-thumb" data-status={item.status} data-label={item.label ?? ''}>
              <img src={item.url} alt={`Capture ${i() + 1}${item.source === 'file' ? ' (from a file)' : ''}`} />
              <div class="training-thumb-body">
                <span class="training-thumb-name">Image {i() + 1}</span>
                <Show when={item.source === 'file'}>
                  <span class="muted training-thumb-note" data-testid="capture-file">
                    {item.originalName}
                  </span>
                </Show>
                <span class="training-thumb-note" data-testid="capture-person">
                  <Show
                    when={item.status === 'stored' && item.label}
                    fallback={
                      <Show when={item.name ?? props.currentName} fallback={<span class="muted">No name yet</span>}>
                        {(n) => <>For {n()}</>}
                      </Show>
                    }
                  >
                    Saved as <strong class="training-label">{item.label}</strong>
                  </Show>
                </span>
                <CheckLine item={item} />
                <span class={`chip chip-${STATUS_TONE[item.status]}`} data-testid="capture-status">
                  {STATUS_TEXT[item.status]}
                </span>
                <Show when={item.status === 'queued'}>
                  <span class="muted training-thumb-note">sent when the server is back</span>
                </Show>
                <Show when={item.status === 'failed' && item.error}>
                  <span class="training-thumb-error">{item.error}</span>
                </Show>
                <Show when={(item.status === 'new' || item.status === 'failed') && heldBecause(item) === 'no_face'}>
                  <button
                    type="button"
                    class="secondary small"
                    aria-label={`Keep anyway: image ${i() + 1}`}
                    onClick={() => props.captures.keepAnyway(item.id)}
                  >
                    Keep anyway
                  </button>
                </Show>
                <Show
                  when={
                    (item.status === 'new' || item.status === 'failed') &&
                    item.check.state === 'done' &&
                    item.check.result.verdict === 'several_faces'
                  }
                >
                  <button
                    type="button"
                    class={item.face ? 'secondary small' : 'small'}
                    aria-label={`${item.face ? 'Change face' : 'Pick a face'} in image ${i() + 1}`}
                    onClick={(e) => {
                      returnFocus = e.currentTarget;
                      setPicking(item.id);
                    }}
                  >
                    {item.face ? 'Change face' : 'Pick a face'}
                  </button>
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
      <Show when={pickingItem()}>
        {(item) => (
          <Show when={item().check.state === 'done' && (item().check as Extract<CaptureItem['check'], { state: 'done' }>).result}>
            {(r) => (
              <FacePicker
                url={item().url}
                what={`image ${index(item().id)}`}
                faces={r().faces}
                picked={item().face}
                onPick={(f) => props.captures.pickFace(item().id, f)}
                onClose={() => {
                  setPicking(null);
                  const el = returnFocus;
                  queueMicrotask(() => el?.isConnected && el.focus());
                }}
              />
            )}
          </Show>
        )}
      </Show>
    </>
  );
}
