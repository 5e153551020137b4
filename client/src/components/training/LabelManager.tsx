/**
 * Every person Lookout has photos of, by the name typed for them (the label beside it): image counts, what
 * their photos are worth ("1 photo: add 2 more from other angles"), whether the trained model knows them,
 * their photos on demand (with each one's original file name and check) (each with its own Delete, for one bad
 * shot), and deleting a person after an in-page confirmation (a dialog the keyboard and screen readers can use,
 * unlike window.confirm on some phones' installed apps). A deletion removes the person everywhere, their samples in
 * the trained models too (no retraining needed): the notice says what went.
 */
import { createEffect, createResource, createSignal, For, Match, on, onMount, Show, Switch } from 'solid-js';
import type { ImageDeleteResponse, LabelDeleteResponse } from '../../../../shared/api/index';
import { A } from '@solidjs/router';
import { ApiImage } from '../../auth/ApiImage';
import { api, ApiFailure } from '../../lib/api';
import { type PersonSummary, shownName } from '../../lib/people';
import { personPath } from '../../lib/people-api';
import { detectionReason, detectionShort, readCheckAnswer, verdictText, verdictTone } from '../../lib/photo-check';
import { ageText, refreshStatus, serverStatus } from '../../lib/server-status';
import { enrollmentSummary } from '../../../../shared/recognition/photo-check';
import { Notice } from '../Notice';
import { DeleteImageButton } from './DeleteImageButton';

const message = (err: unknown) => (err instanceof ApiFailure || err instanceof Error ? err.message : String(err));

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** "3 photos, 6 samples in the trained models, 2 sightings": what a deletion removed, the kinds it found any of. */
function removedText(removed: LabelDeleteResponse['removed']): string {
  const parts = [count(removed.images, 'photo', 'photos')];
  if (removed.templates > 0) parts.push(count(removed.templates, 'sample in the trained models', 'samples in the trained models'));
  if (removed.sightings > 0) parts.push(count(removed.sightings, 'sighting', 'sightings'));
  if (removed.corrections > 0) parts.push(count(removed.corrections, '“not this person” correction', '“not this person” corrections'));
  if (removed.results > 0) parts.push(count(removed.results, 'stored result', 'stored results'));
  return parts.join(', ');
}

type Deleted = LabelDeleteResponse & { name: string; remaining: number };

export function LabelManager(props: { version: number }) {
  // Also refetched when the shared server state sees the people change (a sync, another tab), so no Refresh is needed.
  // And when the server is back after being away, for the list that failed to load meanwhile (its people may be
  // the same as before, so labelsChanged alone would not ask).
  const [backOnline, setBackOnline] = createSignal(0);
  createEffect(
    on(serverStatus.reachable, (now, before) => {
      if (now === true && before === false) setBackOnline((n) => n + 1);
    }),
  );
  const [labels, { refetch }] = createResource(
    () => [props.version, serverStatus.labelsChanged(), backOnline()],
    () => api.labels(),
  );
  /**
   * Offline, the last list the server gave (kept on this device, lib/server-status.ts), as the dashboard shows it:
   * "could not be loaded" beside a dashboard that lists everyone read as if the people were lost.
   */
  const lastKnown = () => (labels.error && serverStatus.reachable() === false ? serverStatus.labels() : null);
  // `latest` read before the first answer suspends the whole page ("Loading the page…", no camera) until the
  // server lists its people, which takes seconds on a busy server: this list says it is loading instead.
  const loaded = () => (labels.state === 'ready' || labels.state === 'refreshing' ? labels.latest : undefined);
  const shown = () => lastKnown() ?? loaded();
  const [deleted, setDeleted] = createSignal<Deleted | null>(null);

  // One photo gone: the counts change (and the person goes with their last photo).
  const afterImageDelete = async () => {
    await refetch();
    void refreshStatus();
  };

  const afterDelete = async (r: LabelDeleteResponse, name: string) => {
    const next = await refetch();
    setDeleted({ ...r, name, remaining: next?.count ?? 0 });
    void refreshStatus();
  };

  return (
    <section class="training-people" aria-labelledby="training-people-title">
      <div class="row training-people-head">
        <h2 id="training-people-title">People Lookout has photos of</h2>
        <button type="button" class="secondary small" onClick={() => void refetch()} disabled={labels.loading}>
          Refresh
        </button>
      </div>
      <Show when={deleted()}>
        {(d) => (
          <Notice
            kind={d().retrain_needed ? 'warn' : 'ok'}
            title={d().name === d().label ? `Deleted ${d().label}` : `Deleted ${d().name} (${d().label})`}
            testId="label-deleted"
          >
            <p class="training-notice-line" data-testid="label-deleted-removed">
              Removed everywhere: {removedText(d().removed)}.
            </p>
            <Show when={!d().retrain_needed && d().removed.templates > 0}>
              <p class="training-notice-line">The trained models no longer know {d().name}: no retraining needed.</p>
            </Show>
            <Show when={d().retrain_needed}>
              <p class="training-notice-line">
                <Show
                  when={d().remaining > 0}
                  fallback={<>The trained model still recognises {d().label} until it is trained again with someone else’s photos.</>}
                >
                  The trained model still recognises {d().label}: press “Train the model” to retrain it without them.
                </Show>
              </p>
            </Show>
          </Notice>
        )}
      </Show>
      <Show when={lastKnown() && serverStatus.updatedAt()}>
        {(at) => (
          <p class="muted" role="status" data-testid="training-labels-last-known">
            The server cannot be reached: the last known list, from {ageText(at())}. Photos and deletions need the server.
          </p>
        )}
      </Show>
      <Switch>
        <Match when={labels.error && !lastKnown()}>
          <Notice kind="error" title="The list of people could not be loaded" testId="labels-error">
            <p class="training-notice-line">{message(labels.error)}</p>
            <button type="button" class="secondary small" onClick={() => void refetch()}>
              Try again
            </button>
          </Notice>
        </Match>
        <Match when={!labels.error && !shown()}>
          <p role="status">Loading the list of people…</p>
        </Match>
        <Match when={shown() && shown()!.count === 0}>
          <p data-testid="training-labels-empty" class="card">
            Nobody has been added yet. Enter a name above, take 3 to 5 photos and save them.
          </p>
        </Match>
        <Match when={shown()}>
          {(l) => (
            <ul class="training-label-list" data-testid="training-labels">
              {/* Keyed by label: a refetch (after deleting one photo) keeps each row, its photos open. */}
              <For each={l().details.map((d) => d.label)}>
                {(label) => (
                  <LabelRow
                    detail={l().details.find((d) => d.label === label) ?? { label, images: 0, trained: false }}
                    onDeleted={(r, name) => void afterDelete(r, name)}
                    onImageDeleted={() => void afterImageDelete()}
                  />
                )}
              </For>
            </ul>
          )}
        </Match>
      </Switch>
    </section>
  );
}

/** A stored photo as `GET /api/images/{label}` lists it, with what newer servers add. */
type StoredPhoto = { filename: string; created: string; original_name?: string | null; check?: unknown };

function LabelRow(props: { detail: PersonSummary; onDeleted: (r: LabelDeleteResponse, name: string) => void; onImageDeleted: () => void }) {
  const d = () => props.detail;
  const who = () => shownName(d());
  // An older server says nothing of its photos: counted as not checked.
  const advice = () => d().enrollment?.advice || enrollmentSummary(Array<null>(d().images).fill(null)).advice;
  const [open, setOpen] = createSignal(false);
  const [confirming, setConfirming] = createSignal(false);
  const [deleting, setDeleting] = createSignal(false);
  const [error, setError] = createSignal('');
  // Fetched when first opened, and again when the count changes while open.
  const [images] = createResource(
    () => (open() ? `${d().label}:${d().images}` : false),
    () => api.labelImages(d().label),
  );
  const id = () => `label-${d().label.replace(/[^a-z0-9_-]/gi, '_')}`;
  let deleteButton: HTMLButtonElement | undefined;
  const [imageNote, setImageNote] = createSignal('');
  let imageNoteBox: HTMLParagraphElement | undefined;

  const imageDeleted = (r: ImageDeleteResponse | null) => {
    setImageNote(
      r === null
        ? 'That photo had already been deleted.'
        : `Deleted the photo; ${r.remaining} ${r.remaining === 1 ? 'photo is' : 'photos are'} left.${r.retrain_needed ? ' The trained model still has it: press “Train the model” to retrain without it.' : ''}`,
    );
    props.onImageDeleted();
    // Its button is gone: the focus goes to what happened rather than to the page.
    queueMicrotask(() => imageNoteBox?.focus());
  };

  const remove = async () => {
    setDeleting(true);
    setError('');
    // Read now: while the deletion runs, the list may refresh without this person (this row then goes, and its
    // props can no longer be read).
    const name = who();
    try {
      const r = await api.deleteLabel(d().label);
      setConfirming(false);
      props.onDeleted(r, name);
    } catch (err) {
      setError(message(err));
    } finally {
      setDeleting(false);
    }
  };

  const cancel = () => {
    setConfirming(false);
    queueMicrotask(() => deleteButton?.focus());
  };

  return (
    <li class="card training-label-item" data-testid="training-label" data-label={d().label}>
      <div class="row training-label-row">
        <strong class="training-label-name" data-testid="person-name">
          {who()}
        </strong>
        <Show when={who() !== d().label}>
          <span class="muted training-label" data-testid="person-label">
            {d().label}
          </span>
        </Show>
        <span>
          {d().images} {d().images === 1 ? 'image' : 'images'}
        </span>
        <span class={`chip ${d().trained ? 'chip-ok' : 'chip-warn'}`}>{d().trained ? 'Trained' : 'Not trained yet'}</span>
        <span class="training-label-actions row">
          {/* #36 2: their page: rename, cover, merge, move photos, sightings, search by face */}
          <A class="button secondary small" href={personPath(d().label)} aria-label={`Page of ${who()}`}>
            Page
          </A>
          <button
            type="button"
            class="secondary small"
            aria-expanded={open() ? 'true' : 'false'}
            aria-controls={`${id()}-images`}
            aria-label={`${open() ? 'Hide' : 'View'} images of ${who()}`}
            onClick={() => setOpen(!open())}
          >
            {open() ? 'Hide images' : 'View images'}
          </button>
          <button
            type="button"
            class="danger small"
            ref={deleteButton}
            aria-label={`Delete ${who()}`}
            disabled={confirming()}
            onClick={() => setConfirming(true)}
          >
            Delete
          </button>
        </span>
      </div>

      <p class="muted training-enrollment" data-testid="person-enrollment">
        {advice()}.
      </p>
      <Show when={confirming()}>
        <ConfirmDelete
          label={d().label}
          name={who()}
          images={d().images}
          busy={deleting()}
          onConfirm={() => void remove()}
          onCancel={cancel}
        />
      </Show>
      <Show when={error()}>
        <p class="training-field-error" role="alert">
          {error()}
        </p>
      </Show>

      <div id={`${id()}-images`} hidden={!open()}>
        <Show when={imageNote()}>
          <p class="muted training-image-note" role="status" tabindex="-1" ref={imageNoteBox} data-testid="image-deleted">
            {imageNote()}
          </p>
        </Show>
        <Show when={open()}>
          <Switch>
            <Match when={images.error}>
              <p class="training-field-error" role="alert">
                {message(images.error)}
              </p>
            </Match>
            <Match when={images.loading && !images.latest}>
              <p role="status">Loading images…</p>
            </Match>
            <Match when={images.latest}>
              {(imgs) => (
                <ul class="training-label-images" aria-label={`Images of ${who()}`}>
                  <For each={imgs().files as StoredPhoto[]}>
                    {(img, i) => (
                      <li>
                        <ApiImage
                          src={api.imageUrl(d().label, img.filename)}
                          alt={`${who()}, ${i() + 1} of ${imgs().count}`}
                          title={`${img.original_name || img.filename}, stored ${new Date(img.created).toLocaleString()}`}
                          loading="lazy"
                        />
                        <span class="muted training-image-name" data-testid="stored-photo-name">
                          {img.original_name || img.filename}
                        </span>
                        <Show when={img.check ? readCheckAnswer({ check: img.check, faces: [] }) : null}>
                          {(c) => (
                            <>
                              <span
                                class={`chip chip-${verdictTone(c(), true)}`}
                                data-testid="stored-photo-check"
                                data-detection={c().method}
                              >
                                {verdictText(c(), true)}
                              </span>
                              <Show when={detectionShort(c())}>
                                {(t) => (
                                  <span
                                    class="muted training-image-name"
                                    data-testid="stored-photo-detection"
                                    title={detectionReason(c()) || undefined}
                                  >
                                    {t()}
                                  </span>
                                )}
                              </Show>
                            </>
                          )}
                        </Show>
                        <DeleteImageButton
                          label={d().label}
                          filename={img.filename}
                          name={`Delete photo ${i() + 1} of ${who()}`}
                          onDeleted={imageDeleted}
                        />
                      </li>
                    )}
                  </For>
                </ul>
              )}
            </Match>
          </Switch>
        </Show>
      </div>
    </li>
  );
}

function ConfirmDelete(props: { label: string; name: string; images: number; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  let cancelButton: HTMLButtonElement | undefined;
  // The safe choice takes the focus, so Enter pressed by habit does not delete.
  onMount(() => cancelButton?.focus());
  const titleId = `confirm-${props.label.replace(/[^a-z0-9_-]/gi, '_')}`;
  return (
    <div
      class="training-confirm"
      role="alertdialog"
      aria-modal="false"
      aria-labelledby={titleId}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          props.onCancel();
        }
      }}
    >
      <p id={titleId}>
        Delete <strong>{props.name}</strong> and {props.images === 1 ? 'its photo' : `all ${props.images} photos`}? This cannot be undone.
      </p>
      <div class="row">
        <button type="button" class="danger" disabled={props.busy} onClick={() => props.onConfirm()}>
          {props.busy ? 'Deleting…' : `Yes, delete ${props.name}`}
        </button>
        <button type="button" class="secondary" ref={cancelButton} disabled={props.busy} onClick={() => props.onCancel()}>
          Cancel
        </button>
      </div>
    </div>
  );
}
