/**
 * The last check in words: each person with their verdict and the items they wear or miss, the protective
 * items expected, and the LLM's safety note when the server made one (on a violation).
 */
import { For, Show } from 'solid-js';
import type { PpeDetectResponse } from '../../../../shared/api/index';
import { listText } from '../../lib/ppe-history';

/** `result` is null before the first check. */
export function SafetySummary(props: { result: PpeDetectResponse | null; expected: readonly string[] }) {
  return (
    <section class="card safety-summary" data-testid="safety-summary" aria-labelledby="safety-summary-title">
      <h2 id="safety-summary-title">Persons</h2>
      <Show when={props.result} fallback={<p class="muted">Nothing checked yet.</p>}>
        {(r) => (
          <Show when={r().persons.length > 0} fallback={<p data-testid="safety-nobody">Nobody in view.</p>}>
            <ol class="safety-persons">
              <For each={r().persons}>
                {(p, i) => (
                  <li class="safety-person" classList={{ violation: p.status === 'violation' }} data-testid="safety-person">
                    <span class="safety-person-head">
                      <strong>Person {i() + 1}</strong>
                      <span class={`chip ${p.status === 'compliant' ? 'chip-ok' : 'chip-error'}`}>
                        {p.status === 'compliant' ? 'Compliant' : 'Violation'}
                      </span>
                    </span>
                    <Show when={p.missing.length > 0}>
                      <span>Missing: {listText(p.missing)}</span>
                    </Show>
                    <Show when={p.present.length > 0}>
                      <span class="muted">Wears: {listText(p.present)}</span>
                    </Show>
                  </li>
                )}
              </For>
            </ol>
          </Show>
        )}
      </Show>
      <Show when={props.expected.length > 0}>
        <p class="muted small safety-expected">Required for everyone: {listText(props.expected)}.</p>
      </Show>
    </section>
  );
}

/** The chat LLM's safety analysis of a violation; nothing when there is none. */
export function SafetyNote(props: { text: string | null | undefined }) {
  return (
    <Show when={props.text?.trim()}>
      {(text) => (
        <section class="card safety-note" data-testid="safety-note" aria-labelledby="safety-note-title">
          <h2 id="safety-note-title">Safety analysis</h2>
          <p>{text()}</p>
          <p class="muted small">Written by the language model from the detections; check before acting on it.</p>
        </section>
      )}
    </Show>
  );
}
