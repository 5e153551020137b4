/** Camera or uploaded photo: two radio buttons drawn as one segmented control (arrow keys move between them). */
import { For } from 'solid-js';

export type Source = 'camera' | 'photo';

const OPTIONS: { value: Source; label: string }[] = [
  { value: 'camera', label: 'Camera' },
  { value: 'photo', label: 'Photo' },
];

export function SourceSwitch(props: { name: string; value: Source; onChange: (source: Source) => void }) {
  return (
    <fieldset class="source-switch">
      <legend>Picture from</legend>
      <div class="segmented">
        <For each={OPTIONS}>
          {(o) => (
            <label classList={{ selected: props.value === o.value }}>
              <input
                type="radio"
                name={props.name}
                value={o.value}
                checked={props.value === o.value}
                onChange={() => props.onChange(o.value)}
              />
              {o.label}
            </label>
          )}
        </For>
      </div>
    </fieldset>
  );
}
