/** How often the camera is checked: radio buttons drawn as the analysis pages' segmented control. */
import { For } from 'solid-js';

export const INTERVALS_MS = [1000, 2000, 5000] as const;

export function IntervalChoice(props: { value: number; onChange: (ms: number) => void }) {
  return (
    <fieldset class="source-switch interval-switch">
      <legend>Check every</legend>
      <div class="segmented">
        <For each={INTERVALS_MS}>
          {(ms) => (
            <label classList={{ selected: props.value === ms }}>
              <input
                type="radio"
                name="safety-interval"
                value={ms}
                aria-label={ms === 1000 ? 'Every second' : `Every ${ms / 1000} seconds`}
                checked={props.value === ms}
                onChange={() => props.onChange(ms)}
              />
              {ms / 1000} s
            </label>
          )}
        </For>
      </div>
    </fieldset>
  );
}
