/** The review actions taken lately (on this page or elsewhere), newest first, each with its Undo until training. */
import { For, Show } from 'solid-js';
import type { ReviewAction } from '../../lib/faces-api';
import { actionText, timeText } from './words';

const WHY_KEPT = { undone: 'Undone', trained: 'Kept: trained since', training: 'Training now' } as const;

export function RecentActions(props: {
  actions: readonly ReviewAction[];
  nameOf: (label: string) => string;
  busy: boolean;
  onUndo: (a: ReviewAction, text: string) => void;
}) {
  const text = (a: ReviewAction) =>
    actionText({ kind: a.kind, count: a.sighting_ids.length, name: a.label ? props.nameOf(a.label) : null });
  return (
    <section class="faces-actions" aria-labelledby="faces-actions-title">
      <h2 id="faces-actions-title">Recent actions</h2>
      <ul class="faces-action-list" data-testid="faces-actions">
        <For each={props.actions}>
          {(a) => (
            <li class="faces-action" data-testid="faces-action" data-kind={a.kind}>
              <span>
                {text(a)} <span class="muted">· {timeText(a.created_at)}</span>
              </span>
              <Show
                when={a.undoable}
                fallback={<span class="muted faces-action-state">{WHY_KEPT[a.not_undoable_because ?? 'undone']}</span>}
              >
                <button type="button" class="secondary small" disabled={props.busy} onClick={() => props.onUndo(a, text(a))}>
                  Undo<span class="faces-sr-only">: {text(a)}</span>
                </button>
              </Show>
            </li>
          )}
        </For>
      </ul>
    </section>
  );
}
