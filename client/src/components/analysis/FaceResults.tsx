/**
 * The faces of a recognition result in words: a list (one line per face: who, how sure) and, for a group,
 * a grid of cards with each face cut out of the analysed frame.
 */
import { createEffect, For, Index, Show } from 'solid-js';
import type { FaceResult } from '../../../../shared/api/index';

/** A group photo gets the grid of face cards from this many faces on. */
export const GRID_MIN_FACES = 3;

export function percent(confidence: number): string {
  return `${Math.round(confidence)}%`;
}

function isKnown(face: FaceResult): boolean {
  return face.label !== 'unknown';
}

export function FaceList(props: { faces: readonly FaceResult[] }) {
  return (
    <ul class="face-list" aria-label="Faces found">
      <For each={props.faces}>
        {(face) => (
          <li class="face-result" classList={{ unknown: !isKnown(face) }} data-testid="face-result">
            <span class="face-dot" aria-hidden="true" />
            <strong class="face-label">{face.label}</strong>
            <span class="face-confidence">{percent(face.confidence)} match</span>
            <Show when={!isKnown(face)}>
              <span class="muted face-hint">not anyone the model was trained on</span>
            </Show>
          </li>
        )}
      </For>
    </ul>
  );
}

/** One face cut out of the frame, drawn at its own pixel size and scaled by CSS. */
function FaceCrop(props: { frame: HTMLCanvasElement; face: FaceResult }) {
  let canvas!: HTMLCanvasElement;
  createEffect(() => {
    const { x, y, w, h } = props.face;
    canvas.width = Math.max(1, w);
    canvas.height = Math.max(1, h);
    canvas.getContext('2d')!.drawImage(props.frame, x, y, w, h, 0, 0, w, h);
  });
  return <canvas ref={canvas} class="face-crop" role="img" aria-label={`Face of ${props.face.label}`} />;
}

export function FaceGrid(props: { faces: readonly FaceResult[]; frame: HTMLCanvasElement }) {
  return (
    <ul class="face-grid" data-testid="face-grid" aria-label="Faces in the picture">
      <Index each={props.faces}>
        {(face) => (
          <li class="face-card" classList={{ unknown: !isKnown(face()) }} data-testid="face-card">
            <FaceCrop frame={props.frame} face={face()} />
            <strong class="face-label">{face().label}</strong>
            <span>{percent(face().confidence)} match</span>
            <span class="muted">
              {face().w} x {face().h} px
            </span>
          </li>
        )}
      </Index>
    </ul>
  );
}
