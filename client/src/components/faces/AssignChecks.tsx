/**
 * The photo check of faces just assigned (their crops are training photos now): each one with a problem, its
 * thumbnail, the verdict as the Training page words it, and the server's sentence. Good ones are not listed.
 */
import { For, Show } from 'solid-js';
import { ApiImage } from '../../auth/ApiImage';
import { api } from '../../lib/api';
import { detectionReason, detectionText, readCheckAnswer, verdictText, verdictTone } from '../../lib/photo-check';
import type { AssignedCheck } from './words';

export function AssignChecks(props: { label: string; name: string; checks: readonly AssignedCheck[] }) {
  const bad = () => props.checks.filter((c) => c.check && c.check.verdict !== 'ok');
  return (
    <Show when={bad().length > 0}>
      <ul class="faces-checks" data-testid="faces-assign-checks">
        <For each={bad()}>
          {(c, i) => {
            const result = readCheckAnswer({ check: c.check, faces: [] });
            return (
              <li class="faces-check" data-testid="faces-assign-check" data-verdict={result.verdict}>
                <ApiImage
                  class="faces-check-photo"
                  src={api.imageUrl(props.label, c.filename)}
                  alt={`${props.name}, assigned photo ${i() + 1} with a problem`}
                  loading="lazy"
                />
                <span class={`chip chip-${verdictTone(result, false)}`}>{verdictText(result, false)}</span>
                <span class="muted faces-check-text">
                  {[c.check!.message, detectionText(result), detectionReason(result)].filter(Boolean).join(' ')}
                </span>
              </li>
            );
          }}
        </For>
      </ul>
    </Show>
  );
}
