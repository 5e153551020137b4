/**
 * "This is…": picks who a group or some faces are, an existing person from a list or someone new by the name typed
 * (shown as the label Lookout will store it under), and says in words what is missing before anything is sent.
 */
import { createSignal, For, Show } from 'solid-js';
import { normalizeLabel } from '../../../../shared/api/labels';
import type { Person } from '../../lib/faces-api';

export const NEW_PERSON = '__new__';

export interface KnownName {
  label: string;
  name: string;
}

export function AssignForm(props: {
  /** Unique per form on the page (ids of its fields). */
  id: string;
  people: readonly KnownName[];
  /** The button's words, e.g. "Assign 3 faces". */
  action: string;
  busy: boolean;
  onAssign: (person: Person, words: string) => void;
}) {
  const [choice, setChoice] = createSignal('');
  const [name, setName] = createSignal('');
  const [problem, setProblem] = createSignal('');
  let select!: HTMLSelectElement;
  let input: HTMLInputElement | undefined;

  const preview = () => {
    const c = normalizeLabel(name());
    return name().trim() && c.ok ? c.label : '';
  };

  const submit = (e: SubmitEvent) => {
    e.preventDefault();
    setProblem('');
    const c = choice();
    if (c === '') {
      setProblem('Choose who this is, or “Someone new”.');
      select.focus();
      return;
    }
    if (c !== NEW_PERSON) {
      const p = props.people.find((x) => x.label === c);
      props.onAssign({ label: c }, p?.name ?? c);
      return;
    }
    const typed = name().trim();
    const check = normalizeLabel(typed);
    if (!typed || !check.ok) {
      setProblem(typed ? `${check.ok ? '' : check.reason.replace(/^label\b/, 'The name')}.` : 'Type the new person’s name.');
      input?.focus();
      return;
    }
    props.onAssign({ display_name: typed }, typed);
  };

  return (
    <form class="faces-assign" onSubmit={submit}>
      <div class="field">
        <label for={`${props.id}-who`}>This is…</label>
        <select
          id={`${props.id}-who`}
          ref={select}
          value={choice()}
          aria-invalid={problem() && choice() === '' ? 'true' : undefined}
          aria-describedby={`${props.id}-problem`}
          onChange={(e) => {
            setChoice(e.currentTarget.value);
            setProblem('');
          }}
        >
          <option value="">Choose a person</option>
          <For each={props.people}>{(p) => <option value={p.label}>{p.name}</option>}</For>
          <option value={NEW_PERSON}>Someone new…</option>
        </select>
      </div>
      <Show when={choice() === NEW_PERSON}>
        <div class="field">
          <label for={`${props.id}-name`}>New person’s name</label>
          <input
            id={`${props.id}-name`}
            ref={input}
            type="text"
            autocomplete="off"
            autocapitalize="words"
            spellcheck={false}
            placeholder="e.g. Ada Lovelace"
            value={name()}
            aria-invalid={problem() ? 'true' : undefined}
            aria-describedby={`${props.id}-preview ${props.id}-problem`}
            onInput={(e) => {
              setName(e.currentTarget.value);
              setProblem('');
            }}
          />
          <p class="muted faces-hint" id={`${props.id}-preview`}>
            <Show when={preview()} fallback="Their photos are stored under the name, lower-case with dashes.">
              Stored as <strong>{preview()}</strong>
            </Show>
          </p>
        </div>
      </Show>
      <div id={`${props.id}-problem`} class="faces-problem" aria-live="polite">
        <Show when={problem()}>
          <p class="faces-error">{problem()}</p>
        </Show>
      </div>
      <button type="submit" disabled={props.busy}>
        {props.action}
      </button>
    </form>
  );
}
