/**
 * Faces: what Lookout saw, to review and correct. Unknown faces grouped by likeness (largest groups first) to
 * assign to a person, whose crops then become training photos (with a prompt to train now), or to dismiss; the
 * faces it named, by person and time, with "Not this person" on a wrong name (a correction the recognizers use).
 * Faces ticked in two groups or more (a face on its own is a group of one) can be told apart: "Not the same person"
 * for all of them, every two of them different people. Every action can be undone until the next training.
 */
import { createMemo, createResource, createSignal, For, Show } from 'solid-js';
import { Notice, type NoticeKind } from '../components/Notice';
import { AssignChecks } from '../components/faces/AssignChecks';
import { GroupCard } from '../components/faces/GroupCard';
import { KnownSightings } from '../components/faces/KnownSightings';
import { RecentActions } from '../components/faces/RecentActions';
import { type AssignedCheck, actionText, checksText, facesText } from '../components/faces/words';
import '../components/faces/faces.css';
import { TrainPanel } from '../components/training/TrainPanel';
import { ApiFailure } from '../lib/api';
import { facesApi, type Person, type Sighting, type Target } from '../lib/faces-api';
import { displayNameOf, type PersonSummary, shownName } from '../lib/people';
import { refreshStatus, serverStatus } from '../lib/server-status';

const message = (err: unknown) => (err instanceof ApiFailure || err instanceof Error ? err.message : String(err));

interface Outcome {
  kind: NoticeKind;
  title: string;
  text: string;
  /** The action this message is about, to undo it from here, and what it did in words. */
  undo?: { id: string; text: string };
  /** An assign's photo checks, to show the photos with a problem. */
  checks?: { label: string; name: string; list: readonly AssignedCheck[] };
}

export default function Faces() {
  const [version, setVersion] = createSignal(1);
  const [busy, setBusy] = createSignal(false);
  const [outcome, setOutcome] = createSignal<Outcome | null>(null);
  const [trainPrompt, setTrainPrompt] = createSignal(false);
  // Faces marked "not this person" here, with the action that did it (an undo takes the mark away).
  const [corrected, setCorrected] = createSignal<ReadonlyMap<string, string>>(new Map());
  let outcomeBox!: HTMLDivElement;
  // The faces ticked in each group (GroupCard tells): ticked in two groups or more, they can be told apart here.
  const [ticked, setTicked] = createSignal<ReadonlyMap<string, readonly string[]>>(new Map());
  const pick = (groupId: string, ids: readonly string[]) => {
    const next = new Map(ticked());
    if (ids.length > 0) next.set(groupId, ids);
    else next.delete(groupId);
    setTicked(next);
  };
  const tickedIds = createMemo(() => [...ticked().values()].flat());
  const acrossGroups = () => ticked().size >= 2;

  const [groups] = createResource(version, () => facesApi.groups());
  const [actions] = createResource(version, () => facesApi.actions(10));

  // Everyone with photos, by the name typed for them (GET /api/labels' display names), for "This is…".
  const people = createMemo(() =>
    ((serverStatus.labels()?.details ?? []) as PersonSummary[])
      .map((d) => ({ label: d.label, name: shownName(d) }))
      .sort((x, y) => x.name.localeCompare(y.name)),
  );
  const pendingAssign = () => (actions.latest?.actions ?? []).some((a) => a.kind === 'assign' && a.undoable);

  /** Shows what happened and puts the focus on it (the group acted on is gone, and its buttons with it). */
  const show = (o: Outcome) => {
    setOutcome(o);
    // The message box itself, so a screen reader reads its title and text; it is not a Tab stop.
    queueMicrotask(() => {
      const box = outcomeBox?.querySelector<HTMLElement>('.notice');
      if (!box) return;
      box.tabIndex = -1;
      box.focus();
    });
  };

  const run = async (work: () => Promise<Outcome>) => {
    if (busy()) return;
    setBusy(true);
    try {
      show(await work());
    } catch (err) {
      show({ kind: 'error', title: 'That did not work', text: message(err) });
    } finally {
      setBusy(false);
      // The groups are listed again, with nothing ticked.
      setTicked(new Map());
      setVersion((v) => v + 1);
    }
  };

  const assign = (target: Target, count: number, person: Person, words: string) =>
    run(async () => {
      const r = await facesApi.assign(target, person);
      setTrainPrompt(true);
      void refreshStatus(); // a new person or more photos: Training and the dashboard count them
      const n = r.added.length;
      const who = r.display_name || words;
      const skipped = r.skipped.length > 0 ? ` ${facesText(r.skipped.length)} could not be used: their crops are gone.` : '';
      // The crops were checked like uploaded photos: a bad verdict is said (and the photo shown), not refused.
      const checks = r.checks ?? [];
      const problems = checksText(checks);
      return {
        kind: problems ? 'warn' : 'ok',
        title: `Assigned to ${who}`,
        text: `${facesText(n)} became training photos of ${who}.${skipped}${problems ? ` ${problems}` : ''} Train now so Lookout recognises them.`,
        undo: { id: r.action_id, text: actionText({ kind: 'assign', count: n || count, name: who }) },
        ...(problems ? { checks: { label: r.label, name: who, list: checks } } : {}),
      };
    });

  const dismiss = (target: Target, count: number) =>
    run(async () => {
      const r = await facesApi.dismiss(target);
      return {
        kind: 'ok',
        title: 'Dismissed',
        text: `${facesText(r.dismissed)} will not be shown for review again.`,
        undo: { id: r.action_id, text: actionText({ kind: 'dismiss', count: r.dismissed || count }) },
      };
    });

  const apart = (sightingIds: string[], groupId: string) =>
    run(async () => {
      const r = await facesApi.apart(sightingIds, groupId);
      const n = r.sighting_ids.length;
      return {
        kind: 'ok',
        title: 'Split off',
        text: `${n === 1 ? 'This face is' : `These ${n} faces are`} not grouped with the others again.`,
        undo: { id: r.action_id, text: actionText({ kind: 'apart', count: n }) },
      };
    });

  /** Faces of several groups: every two of them are different people (no group to split them off from). */
  const apartAcross = (sightingIds: string[]) =>
    run(async () => {
      const r = await facesApi.apart(sightingIds);
      const n = r.sighting_ids.length;
      return {
        kind: 'ok',
        title: 'Told apart',
        text: `These ${n} faces are different people: Lookout never groups two of them together again.`,
        undo: { id: r.action_id, text: `Told ${facesText(n)} apart as different people` },
      };
    });

  const correct = (s: Sighting, name: string) =>
    run(async () => {
      const r = await facesApi.correct(s.id, s.label ?? undefined);
      setCorrected(new Map([...corrected(), [s.id, r.action_id]]));
      return {
        kind: 'ok',
        title: `Marked: not ${name}`,
        text: `Lookout will not give this face the name ${name} again.`,
        undo: { id: r.action_id, text: actionText({ kind: 'correct', count: 1, name }) },
      };
    });

  const undo = (id: string, text: string) =>
    run(async () => {
      try {
        await facesApi.undo(id);
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 409) {
          // Trained since (the photos are in the models now), training now, or undone already (elsewhere).
          const text =
            err.code === 'already_trained'
              ? 'A training ran since: these photos are in the model now. Delete them on the Training page, then train again.'
              : err.message;
          return { kind: 'warn', title: 'Cannot undo', text };
        }
        throw err;
      }
      setCorrected(new Map([...corrected()].filter(([, action]) => action !== id)));
      void refreshStatus();
      return { kind: 'ok', title: 'Undone', text: `${text}: undone.` };
    });

  return (
    <section class="faces-page">
      <h1>Faces</h1>
      <p class="muted faces-intro">
        Faces Lookout saw lately. Tell it who the strangers are, so it learns them, and correct a face it named wrongly. Everything here can
        be undone until the next training.
      </p>

      <div ref={outcomeBox} class="faces-outcome" data-testid="faces-outcome">
        <Show when={outcome()}>
          {(o) => (
            <Notice kind={o().kind} title={o().title}>
              <p class="faces-line">{o().text}</p>
              <Show when={o().checks}>{(c) => <AssignChecks label={c().label} name={c().name} checks={c().list} />}</Show>
              <Show when={o().undo}>
                {(u) => (
                  <button type="button" class="secondary small" disabled={busy()} onClick={() => void undo(u().id, u().text)}>
                    Undo<span class="faces-sr-only">: {u().text}</span>
                  </button>
                )}
              </Show>
            </Notice>
          )}
        </Show>
      </div>
      <Show when={trainPrompt() || pendingAssign()}>
        <section class="card faces-train" aria-labelledby="faces-train-title" data-testid="faces-train">
          <h2 id="faces-train-title">Train now</h2>
          <p class="muted">The faces you assigned are saved as training photos; Lookout recognises them once the model is trained again.</p>
          <TrainPanel
            prepare={async () => null}
            unsaved={0}
            nothingToTrain={false}
            onFinished={() => {
              setVersion((v) => v + 1);
              setOutcome(null);
            }}
          />
        </section>
      </Show>

      <section class="faces-unknown" aria-labelledby="faces-unknown-title">
        <h2 id="faces-unknown-title">
          Unknown faces{' '}
          <Show when={groups.latest}>
            {(g) => <span class="muted faces-count">({g().total === 1 ? '1 group' : `${g().total} groups`})</span>}
          </Show>
        </h2>
        <Show when={groups.error}>
          <Notice kind="error" title="Cannot list the unknown faces">
            {message(groups.error)}
          </Notice>
        </Show>
        <Show
          when={groups.latest}
          fallback={
            <Show when={!groups.error}>
              <p role="status">Loading the unknown faces…</p>
            </Show>
          }
        >
          {(g) => (
            <Show
              when={g().groups.length > 0}
              fallback={
                <p class="muted" data-testid="faces-unknown-empty">
                  No unknown faces to review.
                </p>
              }
            >
              <ul class="faces-groups">
                <For each={g().groups}>
                  {(group, i) => (
                    <GroupCard
                      group={group}
                      index={i()}
                      people={people()}
                      busy={busy()}
                      onAssign={assign}
                      onDismiss={dismiss}
                      onApart={apart}
                      onPicked={pick}
                      acrossGroups={acrossGroups()}
                    />
                  )}
                </For>
              </ul>
              <Show when={acrossGroups()}>
                <section class="faces-across" aria-labelledby="faces-across-text" data-testid="faces-across">
                  <p id="faces-across-text" class="faces-line">
                    {facesText(tickedIds().length)} ticked in {ticked().size} groups.
                  </p>
                  <button
                    type="button"
                    class="secondary"
                    disabled={busy()}
                    onClick={() => void apartAcross(tickedIds())}
                    aria-label={`Not the same person: the ${tickedIds().length} ticked faces are all different people`}
                    data-testid="faces-apart-across"
                  >
                    Not the same person
                  </button>
                </section>
              </Show>
              <p class="faces-sr-only" role="status">
                {acrossGroups()
                  ? `${facesText(tickedIds().length)} ticked in ${ticked().size} groups: Not the same person is after the groups.`
                  : ''}
              </p>
            </Show>
          )}
        </Show>
      </section>

      <KnownSightings
        version={version()}
        nameOf={displayNameOf}
        busy={busy()}
        corrected={(id) => corrected().has(id)}
        onCorrect={(s, name) => void correct(s, name)}
      />

      <Show when={(actions.latest?.actions.length ?? 0) > 0}>
        <RecentActions
          actions={actions.latest?.actions ?? []}
          nameOf={displayNameOf}
          busy={busy()}
          onUndo={(a, text) => void undo(a.id, text)}
        />
      </Show>
    </section>
  );
}
