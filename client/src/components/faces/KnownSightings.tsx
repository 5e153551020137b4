/**
 * Faces Lookout gave a name, by person, within a time range: each person's count and last time, their faces on
 * demand (newest first, more on request), and "Not this person" on a face that was given the wrong name.
 */
import { createEffect, createResource, createSignal, For, on, Show } from 'solid-js';
import { A } from '@solidjs/router';
import { ApiImage } from '../../auth/ApiImage';
import { ApiFailure } from '../../lib/api';
import { facesApi, type KnownPerson, type Sighting, type TimeRange } from '../../lib/faces-api';
import { personPath } from '../../lib/people-api';
import { Notice } from '../Notice';
import { RANGES, type RangeKey, rangeOf, seenText, sourceText, timeText } from './words';

const PAGE = 24;

const message = (err: unknown) => (err instanceof ApiFailure || err instanceof Error ? err.message : String(err));

export function KnownSightings(props: {
  version: number;
  nameOf: (label: string) => string;
  busy: boolean;
  /** Whether a face was marked "not this person" (and not undone) on this page. */
  corrected: (id: string) => boolean;
  onCorrect: (s: Sighting, name: string) => void;
}) {
  const [key, setKey] = createSignal<RangeKey>('day');
  const [custom, setCustom] = createSignal({ from: '', to: '' });
  const range = () => rangeOf(key(), new Date(), custom());
  const [people] = createResource(
    () => ({ v: props.version, r: range() }),
    ({ r }) => facesApi.people(r),
  );

  return (
    <section class="faces-known" aria-labelledby="faces-known-title">
      <h2 id="faces-known-title">Faces Lookout named</h2>
      <div class="row faces-filter">
        <div class="field">
          <label for="faces-range">Seen in</label>
          <select id="faces-range" value={key()} onChange={(e) => setKey(e.currentTarget.value as RangeKey)}>
            <For each={RANGES}>{(r) => <option value={r.key}>{r.text}</option>}</For>
          </select>
        </div>
        <Show when={key() === 'custom'}>
          <div class="field">
            <label for="faces-from">From</label>
            <input
              id="faces-from"
              type="datetime-local"
              value={custom().from}
              onChange={(e) => setCustom({ ...custom(), from: e.currentTarget.value })}
            />
          </div>
          <div class="field">
            <label for="faces-to">Until</label>
            <input
              id="faces-to"
              type="datetime-local"
              value={custom().to}
              onChange={(e) => setCustom({ ...custom(), to: e.currentTarget.value })}
            />
          </div>
        </Show>
      </div>
      <Show when={people.error}>
        <Notice kind="error" title="Cannot list the named faces">
          {message(people.error)}
        </Notice>
      </Show>
      <Show when={people.latest} fallback={<p role="status">Loading…</p>}>
        {(list) => (
          <Show
            when={list().people.length > 0}
            fallback={
              <p class="muted" data-testid="faces-known-empty">
                No named faces in this time range.
              </p>
            }
          >
            <ul class="faces-people" data-testid="faces-people">
              {/* Keyed by label: a refetch (after an action) keeps each row, its faces open. */}
              <For each={list().people.map((p) => p.label)}>
                {(label) => {
                  const person = () =>
                    list().people.find((p) => p.label === label) ?? { label, display_name: label, count: 0, first_seen: '', last_seen: '' };
                  return (
                    <PersonRow
                      person={person()}
                      name={person().display_name || props.nameOf(label)}
                      range={range()}
                      busy={props.busy}
                      corrected={props.corrected}
                      onCorrect={props.onCorrect}
                    />
                  );
                }}
              </For>
            </ul>
          </Show>
        )}
      </Show>
    </section>
  );
}

function PersonRow(props: {
  person: KnownPerson;
  name: string;
  range: TimeRange;
  busy: boolean;
  corrected: (id: string) => boolean;
  onCorrect: (s: Sighting, name: string) => void;
}) {
  const [open, setOpen] = createSignal(false);
  const [items, setItems] = createSignal<Sighting[]>([]);
  const [cursor, setCursor] = createSignal<string | null>(null);
  const [loading, setLoading] = createSignal(false);
  const [error, setError] = createSignal('');
  const panelId = `faces-person-${props.person.label.replace(/[^a-z0-9_-]/gi, '_')}`;

  const load = async (more: boolean) => {
    setLoading(true);
    setError('');
    try {
      const page = await facesApi.sightings({
        label: props.person.label,
        ...props.range,
        limit: PAGE,
        cursor: more ? cursor() : undefined,
      });
      setItems(more ? [...items(), ...page.sightings] : page.sightings);
      setCursor(page.next_cursor);
    } catch (err) {
      setError(message(err));
    } finally {
      setLoading(false);
    }
  };

  // Another time range: the faces shown follow it.
  createEffect(
    on(
      () => JSON.stringify(props.range),
      () => {
        if (open()) void load(false);
      },
      { defer: true },
    ),
  );

  const toggle = () => {
    const next = !open();
    setOpen(next);
    if (next) void load(false);
  };

  return (
    <li class="card faces-person" data-testid="faces-person" data-label={props.person.label}>
      <div class="faces-person-head">
        <h3 class="faces-person-name">
          {/* #36 2: their page, with every photo and sighting */}
          <A href={personPath(props.person.label)}>{props.name}</A>
        </h3>
        <span class="muted">{seenText(props.person.count, props.person.last_seen)}</span>
        <button type="button" class="secondary small" aria-expanded={open()} aria-controls={panelId} onClick={toggle}>
          {open() ? 'Hide faces' : 'Show faces'}
          <span class="faces-sr-only"> of {props.name}</span>
        </button>
      </div>
      <div id={panelId} hidden={!open()}>
        <Show when={error()}>
          <Notice kind="error" title="Cannot show the faces">
            {error()}
          </Notice>
        </Show>
        <ul class="faces-sightings">
          <For each={items()}>
            {(s) => (
              <li class="faces-sighting" data-testid="faces-sighting">
                <ApiImage src={s.crop_url || facesApi.cropUrl(s.id)} alt={`${props.name}, ${timeText(s.seen_at)}`} loading="lazy" />
                <span class="faces-sighting-when">{timeText(s.seen_at)}</span>
                <span class="muted faces-sighting-how">
                  {sourceText(s.source)}
                  {s.certainty === 'unsure' ? ', unsure' : ''}
                </span>
                <Show
                  when={!props.corrected(s.id)}
                  fallback={
                    <span class="faces-marked" role="status">
                      Marked: not {props.name}
                    </span>
                  }
                >
                  <button type="button" class="secondary small" disabled={props.busy} onClick={() => props.onCorrect(s, props.name)}>
                    Not this person
                    <span class="faces-sr-only">
                      {' '}
                      ({props.name}, {timeText(s.seen_at)})
                    </span>
                  </button>
                </Show>
              </li>
            )}
          </For>
        </ul>
        <Show when={loading()}>
          <p role="status">Loading the faces…</p>
        </Show>
        <Show when={!loading() && cursor()}>
          <button type="button" class="secondary small" onClick={() => void load(true)}>
            Show more faces<span class="faces-sr-only"> of {props.name}</span>
          </button>
        </Show>
      </div>
    </li>
  );
}
