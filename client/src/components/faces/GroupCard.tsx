/**
 * One group of unknown faces alike enough to be one person: how often and when it was seen, a strip of its newest
 * crops, and what to do with it. Ticking crops narrows an action to those faces; with none ticked it is the group.
 * A group whose faces do not agree (`coherent: false`) is flagged and never assigned whole: the reviewer ticks the
 * faces of one person first. Ticked faces that are someone else are split off ("Not the same person"): the grouping
 * never puts them with the others again. The page is told what is ticked (`onPicked`): faces ticked in several groups
 * (a face on its own among them) are told apart there, and this group's own "Not the same person" gives way to it.
 */
import { createMemo, createSignal, For, Show } from 'solid-js';
import { ApiImage } from '../../auth/ApiImage';
import { facesApi, type Person, type ReviewGroup, type Target } from '../../lib/faces-api';
import { AssignForm, type KnownName } from './AssignForm';
import { facesText, seenText, sourcesText } from './words';

export function GroupCard(props: {
  group: ReviewGroup;
  index: number;
  people: readonly KnownName[];
  busy: boolean;
  onAssign: (target: Target, count: number, person: Person, words: string) => void;
  onDismiss: (target: Target, count: number) => void;
  onApart: (sightingIds: string[], groupId: string) => void;
  /** The faces ticked here, on every change. */
  onPicked?: (groupId: string, sightingIds: readonly string[]) => void;
  /** Faces are ticked in other groups too: the page's "Not the same person" acts on all of them. */
  acrossGroups?: boolean;
}) {
  const [picked, setPicked] = createSignal<ReadonlySet<string>>(new Set());
  const id = () => `group-${props.index}`;
  const toggle = (sid: string, on: boolean) => {
    const next = new Set(picked());
    if (on) next.add(sid);
    else next.delete(sid);
    setPicked(next);
    props.onPicked?.(props.group.id, [...next]);
  };
  const target = createMemo((): { target: Target; count: number } =>
    picked().size > 0
      ? { target: { sighting_ids: [...picked()] }, count: picked().size }
      : { target: { group_id: props.group.id }, count: props.group.count },
  );
  /** A group that may be more than one person: only its ticked faces can be assigned. */
  const mustPick = () => !props.group.coherent && picked().size === 0;
  const what = () =>
    picked().size > 0 ? `${facesText(picked().size)} ticked` : props.group.count === 1 ? 'this face' : `all ${props.group.count}`;

  return (
    <li class="card faces-group" data-testid="faces-group">
      <h3 id={`${id()}-title`} class="faces-group-title">
        {seenText(props.group.count, props.group.last_seen)}
      </h3>
      <p class="muted faces-group-sub">{sourcesText(props.group.sources)}</p>
      <Show when={!props.group.coherent}>
        <p class="faces-mixed" data-testid="faces-group-mixed">
          These faces may be more than one person. Tick the faces of one person to assign them.
        </p>
      </Show>
      <fieldset class="faces-strip">
        <legend class="faces-sr-only">
          Faces of this group ({props.group.sample_ids.length} newest shown): tick some to act on them alone
        </legend>
        <ul>
          <For each={props.group.sample_ids}>
            {(sid, i) => (
              <li>
                <label class="faces-crop">
                  <input type="checkbox" checked={picked().has(sid)} onChange={(e) => toggle(sid, e.currentTarget.checked)} />
                  <ApiImage src={facesApi.cropUrl(sid)} alt="" loading="lazy" />
                  <span class="faces-sr-only">Face {i() + 1}</span>
                </label>
              </li>
            )}
          </For>
        </ul>
      </fieldset>
      <div class="faces-group-actions">
        <AssignForm
          id={id()}
          people={props.people}
          busy={props.busy || mustPick()}
          action={picked().size > 0 ? `Assign ${facesText(picked().size)}` : mustPick() ? 'Tick faces to assign' : 'Assign'}
          onAssign={(person, words) => props.onAssign(target().target, target().count, person, words)}
        />
        <button
          type="button"
          class="secondary"
          disabled={props.busy}
          onClick={() => props.onDismiss(target().target, target().count)}
          aria-label={`Dismiss ${what()}`}
        >
          Dismiss{picked().size > 0 ? ` ${facesText(picked().size)}` : ''}
        </button>
        <Show when={picked().size > 0 && picked().size < props.group.count && !props.acrossGroups}>
          <button
            type="button"
            class="secondary"
            disabled={props.busy}
            onClick={() => props.onApart([...picked()], props.group.id)}
            aria-label={`Not the same person as the others: split off ${what()}`}
            data-testid="faces-apart"
          >
            Not the same person
          </button>
        </Show>
      </div>
    </li>
  );
}
