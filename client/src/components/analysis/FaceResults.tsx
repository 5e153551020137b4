/**
 * The faces of a recognition result in words: a list (one line per face: who, how sure, and for an unknown face
 * why) and, for a group, a grid of cards with each face cut out of the analysed frame. Identical unknown faces
 * are one entry ("7 unknown faces"), opened on demand (face-groups.ts).
 */
import { createEffect, createMemo, For, Index, Show } from 'solid-js';
import type { FaceResult } from '../../../../shared/api/index';
import {
  candidateText,
  isKnown,
  matchText,
  nameText,
  percent,
  type Reason,
  reasonOf,
  REASON_WORDS,
  reasonWords,
  type ShownFace,
  toneOf,
} from '../../lib/face-words';
import { type FaceEntry, groupFaces } from './face-groups';

/** A group photo gets the grid of face cards from this many faces on. */
export const GRID_MIN_FACES = 3;

export { percent };

type Group = Extract<FaceEntry, { kind: 'group' }>;

/**
 * The entries of a result as the lists render them: single faces by position, groups by reason. A camera sends a new
 * result every frame; keyed by reason, an opened group stays open (and keeps the focus) from frame to frame.
 */
function entriesOf(faces: () => readonly FaceResult[]) {
  const entries = createMemo(() => groupFaces(faces()));
  const singles = () => entries().flatMap((e) => (e.kind === 'face' ? [e.face] : []));
  const groups = () => entries().flatMap((e) => (e.kind === 'group' ? [e] : []));
  const reasons = createMemo(() => groups().map((g) => g.reason), undefined, {
    equals: (a, b) => a.length === b.length && a.every((r, i) => r === b[i]),
  });
  const group = (reason: Reason): Group => groups().find((g) => g.reason === reason) ?? { kind: 'group', reason, faces: [] };
  return { singles, reasons, group };
}

/** Who the face is ("alice", amber "probably alice", "unknown") and, named, its score (#36: none on an unknown face). */
function FaceName(props: { face: ShownFace }) {
  return (
    <>
      <strong class="face-label">{nameText(props.face)}</strong>
      <Show when={matchText(props.face)}>{(text) => <span class="face-confidence">{text()}</span>}</Show>
    </>
  );
}

/** Why an unsure face is unsure; an unknown face's nearest person and why it was not named. */
function FaceWhy(props: { face: ShownFace }) {
  return (
    <>
      <Show when={toneOf(props.face) === 'unsure'}>
        <span class="muted face-hint" data-testid="face-unsure">
          Unsure: close to the limit, or close to someone else.
        </span>
      </Show>
      <Show when={candidateText(props.face)}>
        {(text) => (
          <span class="face-candidate" data-testid="face-candidate">
            {text()}
          </span>
        )}
      </Show>
      <Show when={!isKnown(props.face)}>
        <span class="muted face-hint" data-testid="face-reason" data-reason={reasonOf(props.face)}>
          {reasonWords(props.face)}
        </span>
      </Show>
    </>
  );
}

/** The tone as classes: the colour of the line's or card's edge and of an unsure name. */
function toneClasses(face: ShownFace): Record<string, boolean> {
  const tone = toneOf(face);
  return { 'face-unsure': tone === 'unsure', unknown: tone === 'unknown' };
}

function FaceLine(props: { face: ShownFace }) {
  return (
    <li
      class="face-result"
      classList={toneClasses(props.face)}
      data-testid="face-result"
      data-tone={toneOf(props.face)}
      data-box={`${props.face.x},${props.face.y},${props.face.w},${props.face.h}`}
    >
      <span class="face-dot" aria-hidden="true" />
      <FaceName face={props.face} />
      <FaceWhy face={props.face} />
    </li>
  );
}

/** "7 unknown faces" with the reason, opening to the faces one by one. */
function GroupSummary(props: { group: Group }) {
  return (
    <summary class="face-group-summary" data-testid="face-group-summary">
      <strong>{props.group.faces.length} unknown faces</strong> <span class="muted face-hint">{REASON_WORDS[props.group.reason]}</span>
    </summary>
  );
}

export function FaceList(props: { faces: readonly FaceResult[] }) {
  const { singles, reasons, group } = entriesOf(() => props.faces);
  return (
    <ul class="face-list" aria-label="Faces found">
      <Index each={singles()}>{(face) => <FaceLine face={face()} />}</Index>
      <For each={reasons()}>
        {(reason) => (
          <li class="face-group unknown" data-testid="face-group">
            <details>
              <GroupSummary group={group(reason)} />
              <ul class="face-list face-group-members">
                <Index each={group(reason).faces}>{(m) => <FaceLine face={m().face} />}</Index>
              </ul>
            </details>
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

function FaceCard(props: { face: ShownFace; frame: HTMLCanvasElement }) {
  return (
    <li class="face-card" classList={toneClasses(props.face)} data-testid="face-card" data-tone={toneOf(props.face)}>
      <FaceCrop frame={props.frame} face={props.face} />
      <FaceName face={props.face} />
      <span class="muted">
        {props.face.w} x {props.face.h} px
      </span>
      <FaceWhy face={props.face} />
    </li>
  );
}

export function FaceGrid(props: { faces: readonly FaceResult[]; frame: HTMLCanvasElement }) {
  const { singles, reasons, group } = entriesOf(() => props.faces);
  return (
    <ul class="face-grid" data-testid="face-grid" aria-label="Faces in the picture">
      <Index each={singles()}>{(face) => <FaceCard face={face()} frame={props.frame} />}</Index>
      <For each={reasons()}>
        {(reason) => (
          <li class="face-card-group unknown" data-testid="face-card-group">
            <details>
              <GroupSummary group={group(reason)} />
              <ul class="face-grid face-group-members">
                <Index each={group(reason).faces}>{(m) => <FaceCard face={m().face} frame={props.frame} />}</Index>
              </ul>
            </details>
          </li>
        )}
      </For>
    </ul>
  );
}
