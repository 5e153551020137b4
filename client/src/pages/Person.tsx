/**
 * #36 2: a person's page (/people/:label): their cover, every photo and the newest sightings; rename (the display
 * name, the label stays), choose the cover, merge into another person, move chosen photos to another person, each
 * with Undo in the message that follows; and search by face from a sighting, a photo or a photo of the user's own
 * (chosen or dropped: its largest face), answering the sightings of that face, nearest first, with time and where.
 */
import { A, useNavigate, useParams } from '@solidjs/router';
import { createEffect, createMemo, createResource, createSignal, For, Show } from 'solid-js';
import { ApiImage } from '../auth/ApiImage';
import { Notice, type NoticeKind } from '../components/Notice';
import { timeText } from '../components/faces/words';
import '../components/faces/faces.css';
import '../components/people/people.css';
import {
  actionDoneText,
  mergePreviewText,
  nearnessText,
  photosText,
  retrainText,
  sightingsText,
  whereText,
} from '../components/people/person-words';
import { ApiFailure } from '../lib/api';
import { canvasToDataUrl, fileToCanvas, fitWithin } from '../lib/images';
import { type FaceSearchResponse, peopleApi, personPath, type SearchFace } from '../lib/people-api';
import { type PersonSummary, shownName } from '../lib/people';
import { refreshStatus, serverStatus } from '../lib/server-status';

const message = (err: unknown) => (err instanceof ApiFailure || err instanceof Error ? err.message : String(err));
const NEW_PERSON = '__new__';
/** A photo searched with is sent at most this many pixels on its longest side (its faces stay large enough). */
const SEARCH_PHOTO_SIDE = 1600;

interface Outcome {
  kind: NoticeKind;
  title: string;
  text: string;
  undo?: { id: string; text: string };
  train?: boolean;
}

// Kept across pages: after a merge the page shown is the survivor's, and the message with its Undo goes along.
const [outcome, setOutcome] = createSignal<Outcome | null>(null);

export default function Person() {
  const params = useParams<{ label: string }>();
  const navigate = useNavigate();
  const [version, setVersion] = createSignal(1);
  const [busy, setBusy] = createSignal(false);
  const [selected, setSelected] = createSignal<ReadonlySet<string>>(new Set());
  const [newName, setNewName] = createSignal('');
  const [moveTo, setMoveTo] = createSignal('');
  const [moveName, setMoveName] = createSignal('');
  const [mergeInto, setMergeInto] = createSignal('');
  const [confirmMerge, setConfirmMerge] = createSignal(false);
  const [search, setSearch] = createSignal<{ from: string; answer: FaceSearchResponse } | null>(null);
  const [searchError, setSearchError] = createSignal('');
  let outcomeBox!: HTMLDivElement;
  let searchBox!: HTMLElement;

  const [page] = createResource(
    () => ({ label: params.label, v: version() }),
    ({ label }) => peopleApi.page(label),
  );
  const name = () => page.latest?.display_name ?? params.label;
  createEffect(() => {
    document.title = `${name()} · Lookout`;
    setNewName(page.latest?.display_name ?? '');
  });
  createEffect(() => {
    // Another person shown: nothing of the last one stays chosen.
    void params.label;
    setSelected(new Set<string>());
    setConfirmMerge(false);
    setSearch(null);
  });

  const others = createMemo(() =>
    ((serverStatus.labels()?.details ?? []) as PersonSummary[])
      .filter((d) => d.label !== params.label)
      .map((d) => ({ label: d.label, name: shownName(d) }))
      .sort((x, y) => x.name.localeCompare(y.name)),
  );
  const nameOf = (label: string) => others().find((o) => o.label === label)?.name ?? label;

  const show = (o: Outcome) => {
    setOutcome(o);
    queueMicrotask(() => {
      const box = outcomeBox?.querySelector<HTMLElement>('.notice');
      if (!box) return;
      box.tabIndex = -1;
      box.focus();
    });
  };

  const run = async (work: () => Promise<Outcome | null>) => {
    if (busy()) return;
    setBusy(true);
    try {
      const o = await work();
      if (o) show(o);
    } catch (err) {
      show({ kind: 'error', title: 'That did not work', text: message(err) });
    } finally {
      setBusy(false);
      setVersion((v) => v + 1);
    }
  };

  const done = (r: Awaited<ReturnType<typeof peopleApi.rename>>, before: string): Outcome => {
    const text = actionDoneText(r, before);
    const train = retrainText(r);
    return {
      kind: 'ok',
      title: 'Done',
      text: `${text}.${train ? ` ${train}` : ''}`,
      undo: { id: r.action_id, text },
      train: r.retrain_needed,
    };
  };

  const rename = (e: Event) => {
    e.preventDefault();
    const wanted = newName().trim();
    if (!wanted || wanted === name()) return;
    void run(async () => {
      const r = await peopleApi.rename(params.label, wanted);
      void refreshStatus();
      return done(r, name());
    });
  };

  const setCover = (filename: string) => run(async () => done(await peopleApi.cover(params.label, filename), name()));

  const move = (e: Event) => {
    e.preventDefault();
    const files = [...selected()];
    if (files.length === 0 || !moveTo()) return;
    const to = moveTo() === NEW_PERSON ? { display_name: moveName().trim() } : { label: moveTo() };
    if ('display_name' in to && !to.display_name) return;
    void run(async () => {
      const r = await peopleApi.move(params.label, files, to);
      setSelected(new Set<string>());
      void refreshStatus();
      return done(r, name());
    });
  };

  const merge = () =>
    run(async () => {
      const before = name();
      const r = await peopleApi.merge(params.label, mergeInto());
      setConfirmMerge(false);
      void refreshStatus();
      const o = done(r, before);
      navigate(personPath(r.label));
      return o;
    });

  const undo = (id: string, text: string) =>
    run(async () => {
      const r = await peopleApi.undo(id);
      void refreshStatus();
      const missing = r.missing.length ? ` ${photosText(r.missing.length)} had been deleted since and could not come back.` : '';
      if (r.kind === 'merge' && r.label !== params.label) navigate(personPath(r.label));
      return { kind: r.missing.length ? 'warn' : 'ok', title: 'Undone', text: `${text}: undone.${missing}`, train: r.retrain_needed };
    });

  const findFace = async (face: SearchFace, from: string) => {
    setSearchError('');
    try {
      setSearch({ from, answer: await peopleApi.search(face) });
    } catch (err) {
      setSearch(null);
      setSearchError(message(err));
    }
    queueMicrotask(() => searchBox?.focus());
  };

  /** Search with a photo of the user's own (chosen or dropped): its largest face. */
  const findInPhoto = async (file: File | undefined) => {
    if (!file) return;
    try {
      const canvas = fitWithin(await fileToCanvas(file), SEARCH_PHOTO_SIDE);
      await findFace({ image: canvasToDataUrl(canvas) }, `the photo ${file.name}`);
    } catch (err) {
      setSearch(null);
      setSearchError(message(err));
      queueMicrotask(() => searchBox?.focus());
    }
  };

  const toggle = (filename: string, on: boolean) => {
    const next = new Set(selected());
    if (on) next.add(filename);
    else next.delete(filename);
    setSelected(next);
  };

  return (
    <section class="faces-page person-page">
      <p class="person-back">
        <A href="/faces">Faces</A> · <A href="/training">Training</A>
      </p>
      <Show when={page.error && !page.latest}>
        <h1>Person not found</h1>
        <Notice kind="error" title="Cannot show this person">
          {message(page.error)}
        </Notice>
      </Show>
      <div ref={outcomeBox} class="faces-outcome" data-testid="person-outcome">
        <Show when={outcome()}>
          {(o) => (
            <Notice kind={o().kind} title={o().title}>
              <p class="faces-line">{o().text}</p>
              <div class="row">
                <Show when={o().undo}>
                  {(u) => (
                    <button type="button" class="secondary small" disabled={busy()} onClick={() => void undo(u().id, u().text)}>
                      Undo<span class="faces-sr-only">: {u().text}</span>
                    </button>
                  )}
                </Show>
                <Show when={o().train}>
                  <A class="button secondary small" href="/training">
                    Train on the Training page
                  </A>
                </Show>
              </div>
            </Notice>
          )}
        </Show>
      </div>
      <Show when={page.latest}>
        {(p) => (
          <>
            <header class="person-head">
              <Show when={p().cover}>
                {(cover) => (
                  <ApiImage
                    class="person-cover"
                    src={`/api/images/${encodeURIComponent(p().label)}/${encodeURIComponent(cover())}`}
                    alt={`Cover photo of ${p().display_name}`}
                  />
                )}
              </Show>
              <div>
                <h1 data-testid="person-name">{p().display_name}</h1>
                <p class="muted">
                  {photosText(p().photos.length)} · {sightingsText(p().sightings_total)} · id <code>{p().label}</code>
                  {p().trained ? '' : ' · not in the trained model yet'}
                </p>
              </div>
            </header>

            <section class="card" aria-labelledby="person-rename-title">
              <h2 id="person-rename-title">Name</h2>
              <form class="row" onSubmit={rename}>
                <div class="field">
                  <label for="person-name-input">Name shown for this person</label>
                  <input id="person-name-input" value={newName()} onInput={(e) => setNewName(e.currentTarget.value)} maxLength={200} />
                </div>
                <button type="submit" disabled={busy() || !newName().trim() || newName().trim() === p().display_name}>
                  Rename
                </button>
              </form>
              <p class="muted">The id stays {p().label}: links, files and the model keep working.</p>
            </section>

            <section class="card" aria-labelledby="person-photos-title">
              <h2 id="person-photos-title">Photos ({p().photos.length})</h2>
              <Show when={p().photos.length > 0} fallback={<p class="muted">No photos.</p>}>
                <ul class="person-photos" data-testid="person-photos">
                  <For each={p().photos}>
                    {(photo, i) => {
                      const id = `person-photo-${i()}`;
                      const isCover = () => p().cover === photo.filename;
                      return (
                        <li class="person-photo">
                          <ApiImage src={photo.url} alt={`Photo ${i() + 1} of ${p().display_name}`} loading="lazy" />
                          <div class="person-photo-tools">
                            <input
                              type="checkbox"
                              id={id}
                              checked={selected().has(photo.filename)}
                              onChange={(e) => toggle(photo.filename, e.currentTarget.checked)}
                            />
                            <label for={id}>Choose photo {i() + 1}</label>
                          </div>
                          <Show
                            when={!isCover()}
                            fallback={
                              <span class="person-badge" data-testid="person-cover-badge">
                                Cover
                              </span>
                            }
                          >
                            <button type="button" class="secondary small" disabled={busy()} onClick={() => void setCover(photo.filename)}>
                              Make cover<span class="faces-sr-only"> (photo {i() + 1})</span>
                            </button>
                          </Show>
                          <button
                            type="button"
                            class="secondary small"
                            onClick={() => void findFace({ label: p().label, filename: photo.filename }, `photo ${i() + 1}`)}
                          >
                            Find this face<span class="faces-sr-only"> (photo {i() + 1})</span>
                          </button>
                        </li>
                      );
                    }}
                  </For>
                </ul>
                <form class="row person-move" onSubmit={move}>
                  <div class="field">
                    <label for="person-move-to">Move the {photosText(selected().size)} chosen to</label>
                    <select id="person-move-to" value={moveTo()} onChange={(e) => setMoveTo(e.currentTarget.value)}>
                      <option value="">Choose a person…</option>
                      <For each={others()}>{(o) => <option value={o.label}>{o.name}</option>}</For>
                      <option value={NEW_PERSON}>A new person…</option>
                    </select>
                  </div>
                  <Show when={moveTo() === NEW_PERSON}>
                    <div class="field">
                      <label for="person-move-name">New person's name</label>
                      <input id="person-move-name" value={moveName()} onInput={(e) => setMoveName(e.currentTarget.value)} />
                    </div>
                  </Show>
                  <button
                    type="submit"
                    disabled={busy() || selected().size === 0 || !moveTo() || (moveTo() === NEW_PERSON && !moveName().trim())}
                  >
                    Move photos
                  </button>
                </form>
              </Show>
            </section>

            <section class="card" aria-labelledby="person-sightings-title">
              <h2 id="person-sightings-title">Sightings ({p().sightings_total})</h2>
              <Show when={p().sightings.length > 0} fallback={<p class="muted">Lookout has not seen {p().display_name} lately.</p>}>
                <ul class="person-sightings" data-testid="person-sightings">
                  <For each={p().sightings}>
                    {(s) => (
                      <li class="person-sighting">
                        <ApiImage src={s.crop_url} alt={`${p().display_name}, ${timeText(s.seen_at)}`} loading="lazy" />
                        <span>
                          {timeText(s.seen_at)}, {whereText(s.source, s.camera)}
                          {s.how === 'assigned' ? ' (assigned)' : ''}
                        </span>
                        <button
                          type="button"
                          class="secondary small"
                          onClick={() => void findFace({ sighting_id: s.id }, `the sighting of ${timeText(s.seen_at)}`)}
                        >
                          Find this face<span class="faces-sr-only"> ({timeText(s.seen_at)})</span>
                        </button>
                      </li>
                    )}
                  </For>
                </ul>
              </Show>
            </section>

            <section
              class="card"
              aria-labelledby="person-search-title"
              ref={searchBox}
              tabindex="-1"
              data-testid="person-search"
              onDragOver={(e) => e.preventDefault()}
              onDrop={(e) => {
                e.preventDefault();
                void findInPhoto(e.dataTransfer?.files[0]);
              }}
            >
              <h2 id="person-search-title">Search by face</h2>
              <div class="field person-search-photo">
                <label for="person-search-photo">Find the face in a photo</label>
                <input
                  id="person-search-photo"
                  type="file"
                  accept="image/*"
                  aria-describedby="person-search-photo-hint"
                  onChange={(e) => {
                    const input = e.currentTarget;
                    void findInPhoto(input.files?.[0]).finally(() => {
                      input.value = '';
                    });
                  }}
                />
                <p id="person-search-photo-hint" class="muted">
                  Or drop a photo here. Its largest face is looked for in what Lookout saw.
                </p>
              </div>
              <Show when={searchError()}>
                <Notice kind="error" title="Cannot search">
                  {searchError()}
                </Notice>
              </Show>
              <Show
                when={search()}
                fallback={<p class="muted">Choose "Find this face" on a photo or a sighting, or a photo of your own.</p>}
              >
                {(found) => (
                  <>
                    <p role="status">
                      {found().answer.results.length === 0
                        ? `No sightings of the face in ${found().from}.`
                        : `${sightingsText(found().answer.results.length)} of the face in ${found().from}, nearest first.`}
                    </p>
                    <ol class="person-sightings" data-testid="person-search-results">
                      <For each={found().answer.results}>
                        {(r) => (
                          <li class="person-sighting">
                            <ApiImage src={r.crop_url} alt={`Found face, ${timeText(r.seen_at)}`} loading="lazy" />
                            <span>
                              {timeText(r.seen_at)}, {whereText(r.source, r.camera)} ·{' '}
                              {nearnessText(r.distance, found().answer.max_distance)}
                              {r.label ? (
                                <>
                                  {' · '}
                                  <A href={personPath(r.label)}>{r.label === p().label ? p().display_name : nameOf(r.label)}</A>
                                </>
                              ) : (
                                ' · unknown'
                              )}
                            </span>
                          </li>
                        )}
                      </For>
                    </ol>
                  </>
                )}
              </Show>
            </section>

            <section class="card" aria-labelledby="person-merge-title">
              <h2 id="person-merge-title">Merge</h2>
              <p class="muted">The same person enrolled twice? Merge {p().display_name} into the other one.</p>
              <div class="row">
                <div class="field">
                  <label for="person-merge-into">Merge {p().display_name} into</label>
                  <select
                    id="person-merge-into"
                    value={mergeInto()}
                    onChange={(e) => {
                      setMergeInto(e.currentTarget.value);
                      setConfirmMerge(false);
                    }}
                  >
                    <option value="">Choose a person…</option>
                    <For each={others()}>{(o) => <option value={o.label}>{o.name}</option>}</For>
                  </select>
                </div>
                <button type="button" disabled={busy() || !mergeInto()} onClick={() => setConfirmMerge(true)}>
                  Merge…
                </button>
              </div>
              <Show when={confirmMerge() && mergeInto()}>
                <Notice kind="warn" title={`Merge into ${nameOf(mergeInto())}?`}>
                  <p class="faces-line">
                    {mergePreviewText(p().display_name, nameOf(mergeInto()), p().photos.length, p().sightings_total)}
                  </p>
                  <div class="row">
                    <button type="button" disabled={busy()} onClick={() => void merge()}>
                      Merge into {nameOf(mergeInto())}
                    </button>
                    <button type="button" class="secondary" onClick={() => setConfirmMerge(false)}>
                      Cancel
                    </button>
                  </div>
                </Notice>
              </Show>
            </section>
          </>
        )}
      </Show>
    </section>
  );
}
