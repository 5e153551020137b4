/**
 * The person's name, which becomes the label: shows the form the server will store (trimmed, lower-case,
 * spaces to '-') as it is typed ("Will be saved as": nothing is saved yet), and says in words what is wrong
 * with a name before anything is sent. The name as typed is kept too, as the person's display name.
 * The same normalizeLabel the server runs, so the preview and the server never disagree.
 */
import { For, Show } from 'solid-js';
import { normalizeLabel, type LabelCheck } from '../../../../shared/api/labels';

/** The label check, or null while the field is empty (nothing to complain about yet). */
export function checkName(raw: string): LabelCheck | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a name made only of control characters (C0, DEL, C1) is not empty, it is refused with its reason
  return raw.trim() === '' && !/[\u0000-\u001f\u007f-\u009f]/.test(raw) ? null : normalizeLabel(raw);
}

/** normalizeLabel's reasons speak of "label"; a person typed a name. */
export function nameProblem(check: LabelCheck | null): string {
  if (check === null) return 'Enter the person’s name first.';
  if (check.ok) return '';
  const text = check.reason.replace(/^label\b/, 'The name');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

export function NameField(props: {
  value: string;
  onInput: (v: string) => void;
  /** The name is settled (the field left, or Enter): photos taken before any name was typed take it. */
  onCommit?: () => void;
  known: string[];
  /** Counts of images already stored per label, to say "adds to 3 existing photos". */
  counts: Record<string, number>;
  /** Show the "enter a name" message even while empty (after a save was attempted). */
  showEmptyError: boolean;
  ref?: (el: HTMLInputElement) => void;
}) {
  const check = () => checkName(props.value);
  const problem = () => (check() === null ? (props.showEmptyError ? nameProblem(null) : '') : nameProblem(check()));
  const label = () => {
    const c = check();
    return c?.ok ? c.label : '';
  };
  return (
    <div class="field">
      <label for="training-name">Person’s name</label>
      <input
        id="training-name"
        ref={props.ref}
        type="text"
        autocomplete="off"
        autocapitalize="words"
        spellcheck={false}
        placeholder="e.g. Grace Hopper"
        list="training-known-labels"
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
        onChange={() => props.onCommit?.()}
        aria-invalid={problem() ? 'true' : undefined}
        aria-describedby="training-name-help"
      />
      <datalist id="training-known-labels">
        <For each={props.known}>{(l) => <option value={l} />}</For>
      </datalist>
      <div id="training-name-help" aria-live="polite">
        <Show when={problem()}>
          <p class="training-field-error" data-testid="name-error">
            {problem()}
          </p>
        </Show>
        <Show when={label()}>
          <p class="muted training-field-hint" data-testid="label-preview">
            Will be saved as <strong class="training-label">{label()}</strong>
            <Show when={props.counts[label()]}>
              {(n) => (
                <>
                  {' '}
                  — adds to the {n()} {n() === 1 ? 'photo' : 'photos'} already stored for this person
                </>
              )}
            </Show>
          </p>
        </Show>
        <Show when={!problem() && !label()}>
          <p class="muted training-field-hint">Lower-case, with dashes for spaces, is how Lookout stores it.</p>
        </Show>
      </div>
    </div>
  );
}
