/**
 * One radio group of the model configuration page: each option with its name, what it is, whether it can be
 * chosen now and, when not, why. Choosing applies at once (the page sends it), so while a change is on its way
 * further choices are ignored rather than disabled: disabling would throw the keyboard focus out of the group.
 */
import { Index, Show, type JSX } from 'solid-js';

export interface Choice<V extends string> {
  value: V;
  title: string;
  description: string;
  available: boolean;
  /** Why it cannot be chosen now, in words. */
  reason?: string;
  /** In use on the server now. */
  active: boolean;
}

/** The server's reason as the end of a sentence ("Not available: ..."). */
function ending(s: string): string {
  const t = s.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

export function ChoiceGroup<V extends string>(props: {
  name: string;
  legend: string;
  hint: string;
  choices: Choice<V>[];
  /** The checked option: the one being switched to while a change is pending, else the active one. */
  selected: V | undefined;
  pending: boolean;
  onChoose: (value: V) => void;
  /** More facts about an option (training state, connection); reactive, rendered once per option. */
  details?: (value: V) => JSX.Element;
}) {
  const id = (value: string, part: string) => `${props.name}-${value}-${part}`;
  return (
    <fieldset class="config-group card" aria-busy={props.pending} data-testid={`group-${props.name}`}>
      <legend>{props.legend}</legend>
      <p class="muted config-hint">{props.hint}</p>
      {/* Index, not For: the page polls, and options updated in place keep the keyboard focus. */}
      <Index each={props.choices}>
        {(c) => (
          <label
            class="config-option"
            classList={{ 'config-option-active': c().active, 'config-option-unavailable': !c().available }}
            data-testid={`option-${props.name}-${c().value}`}
          >
            <input
              type="radio"
              name={props.name}
              value={c().value}
              checked={props.selected === c().value}
              disabled={!c().available}
              aria-labelledby={id(c().value, 'title')}
              aria-describedby={id(c().value, 'about')}
              onChange={(e) => {
                if (props.pending) {
                  // A change is already on its way: put the radios back as they were and wait for it.
                  const group = e.currentTarget.closest('fieldset');
                  group?.querySelectorAll<HTMLInputElement>('input[type=radio]').forEach((r) => {
                    r.checked = r.value === props.selected;
                  });
                  return;
                }
                props.onChoose(c().value);
              }}
            />
            <span class="config-option-text">
              <span class="config-option-head">
                <span id={id(c().value, 'title')} class="config-option-title">
                  {c().title}
                </span>
                <Show when={c().active}>
                  <span class="chip chip-ok">In use</span>
                </Show>
                <Show when={!c().available}>
                  <span class="chip chip-off">Unavailable</span>
                </Show>
              </span>
              <span id={id(c().value, 'about')} class="config-option-about">
                <span class="config-option-desc">{c().description}</span>
                <Show when={!c().available}>
                  <span class="config-option-reason" data-testid={`reason-${props.name}-${c().value}`}>
                    Not available: {ending(c().reason ?? 'no reason was given')}
                  </span>
                </Show>
                <Show when={props.details}>{(render) => <span class="config-option-details">{render()(c().value)}</span>}</Show>
              </span>
            </span>
          </label>
        )}
      </Index>
    </fieldset>
  );
}
