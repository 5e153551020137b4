/**
 * "Two faces: pick one": the photo large, each face found a button over it (Tab to move, Enter or Space to pick,
 * or a tap), in a modal dialog the keyboard and screen readers can use (Escape closes it, the focus comes back).
 * Only the picked face is saved (`face` on the upload).
 */
import { createSignal, For, onMount } from 'solid-js';
import type { ShownFaceBox } from '../../lib/photo-check';

export function FacePicker(props: {
  url: string;
  /** "image 2 of Person One", for the title and the buttons. */
  what: string;
  faces: ShownFaceBox[];
  picked?: ShownFaceBox;
  onPick: (face: ShownFaceBox) => void;
  onClose: () => void;
}) {
  let dialog!: HTMLDialogElement;
  const [size, setSize] = createSignal<{ w: number; h: number } | null>(null);
  onMount(() => dialog.showModal());
  const same = (a: ShownFaceBox, b?: ShownFaceBox) => !!b && a.x === b.x && a.y === b.y && a.w === b.w && a.h === b.h;
  // Faces left to right, as a person looking at the photo counts them.
  const faces = () => [...props.faces].sort((a, b) => a.x - b.x);
  const where = (i: number, n: number) => (n === 2 ? ['left', 'right'][i] : `${i + 1} from the left`);

  return (
    <dialog
      ref={dialog}
      class="face-picker"
      aria-labelledby="face-picker-title"
      data-testid="face-picker"
      onClose={() => props.onClose()}
      onCancel={() => props.onClose()}
    >
      <h2 id="face-picker-title">Which face is it?</h2>
      <p class="muted">
        {props.faces.length} faces were found in {props.what}. Pick the person’s face: only that face is saved.
      </p>
      <div class="face-picker-stage">
        <img
          src={props.url}
          alt={`${props.what}, with ${props.faces.length} faces marked`}
          onLoad={(e) => {
            setSize({ w: e.currentTarget.naturalWidth, h: e.currentTarget.naturalHeight });
            // The faces are the choice: the first takes the focus once they are there.
            queueMicrotask(() => dialog.querySelector<HTMLButtonElement>('.face-picker-box')?.focus());
          }}
        />
        <For each={size() ? faces() : []}>
          {(f, i) => (
            <button
              type="button"
              class="face-picker-box"
              classList={{ picked: same(f, props.picked) }}
              aria-pressed={same(f, props.picked) ? 'true' : 'false'}
              aria-label={`Face ${i() + 1} (${where(i(), faces().length)})`}
              style={{
                left: `${(f.x / size()!.w) * 100}%`,
                top: `${(f.y / size()!.h) * 100}%`,
                width: `${(f.w / size()!.w) * 100}%`,
                height: `${(f.h / size()!.h) * 100}%`,
              }}
              onClick={() => {
                props.onPick(f);
                dialog.close();
              }}
            >
              <span class="face-picker-number" aria-hidden="true">
                {i() + 1}
              </span>
            </button>
          )}
        </For>
      </div>
      <div class="row">
        <button type="button" class="secondary" onClick={() => dialog.close()}>
          Cancel
        </button>
      </div>
    </dialog>
  );
}
