/**
 * The Admin page's "Audit log": the biometric operations the server recorded (GET /api/audit), newest first,
 * filtered by operation, actor and time, one page at a time ("Show older"). Read-only: the log is append-only.
 */
import { createSignal, For, onMount, Show } from 'solid-js';
import type { AuditResponse } from '../../../../shared/api/audit';
import { createLookoutClient, LookoutError } from '../../../../shared/api/client';
import { authFetch } from '../../auth/session';
import { Notice } from '../Notice';

type Entry = AuditResponse['entries'][number];

const client = createLookoutClient({ fetch: authFetch });

/** The operations, in the page's words (the API's names are the values). */
export const ACTION_WORDS: Record<Entry['action'], string> = {
  enroll: 'Enroll',
  delete: 'Delete',
  train: 'Train',
  verify: 'Verify',
  template_download: 'Template download',
  sighting_access: 'Sighting access',
  image_access: 'Photo access',
  correction: 'Correction',
  review: 'Review',
  person_update: 'Person changed',
  settings_change: 'Settings changed',
  // Counted per address and minute (the row's "× N"); short, as the filter's option sets the select's width.
  anonymous_refused: 'Refused, no token',
};

const OUTCOME_WORDS: Record<Entry['outcome'], string> = { ok: 'done', denied: 'denied', refused: 'refused', error: 'failed' };

function who(e: Entry): string {
  if (e.actor_kind === 'anonymous') return 'anonymous';
  return e.actor_kind === 'client' ? `${e.actor ?? '?'} (client)` : (e.actor ?? '?');
}

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** A `datetime-local` value (local time, no zone) as an ISO time; '' stays unset. */
function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

function messageOf(err: unknown): string {
  if (err instanceof LookoutError) return err.body?.error.message ?? `The server answered ${err.status}.`;
  return 'Cannot reach the Lookout server.';
}

export function AuditLog() {
  const [entries, setEntries] = createSignal<Entry[]>([]);
  const [next, setNext] = createSignal<string | null>(null);
  const [retention, setRetention] = createSignal<number | null>(null);
  const [loading, setLoading] = createSignal(false);
  const [loaded, setLoaded] = createSignal(false);
  const [error, setError] = createSignal('');
  const [action, setAction] = createSignal<Entry['action'] | ''>('');
  const [actor, setActor] = createSignal('');
  const [from, setFrom] = createSignal('');
  const [to, setTo] = createSignal('');

  const load = async (more: boolean) => {
    setLoading(true);
    setError('');
    try {
      const query = {
        ...(action() ? { action: action() as Entry['action'] } : {}),
        ...(actor().trim() ? { actor: actor().trim() } : {}),
        ...(isoOf(from()) ? { from: isoOf(from()) } : {}),
        ...(isoOf(to()) ? { to: isoOf(to()) } : {}),
        ...(more && next() ? { cursor: next()! } : {}),
        limit: 50,
      };
      const page = await client.call('auditLog', { query });
      setEntries(more ? [...entries(), ...page.entries] : page.entries);
      setNext(page.next_cursor);
      setRetention(page.retention_days);
      setLoaded(true);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setLoading(false);
    }
  };

  onMount(() => void load(false));

  const submit = (e: SubmitEvent) => {
    e.preventDefault();
    void load(false);
  };

  return (
    <section aria-labelledby="audit-heading" data-testid="audit-log">
      <h2 id="audit-heading">Audit log</h2>
      <p class="muted">
        Who enrolled, deleted, trained, verified, downloaded templates or looked at sightings, when and from where. Entries cannot be
        changed or deleted
        <Show when={retention()}>{(days) => <>; they are kept {days()} days</>}</Show>.
      </p>
      <form class="audit-filters row" onSubmit={submit}>
        <label>
          Operation{' '}
          <select value={action()} onChange={(e) => setAction(e.currentTarget.value as Entry['action'] | '')}>
            <option value="">All</option>
            <For each={Object.entries(ACTION_WORDS)}>{([value, words]) => <option value={value}>{words}</option>}</For>
          </select>
        </label>
        <label>
          Actor <input value={actor()} autocomplete="off" onInput={(e) => setActor(e.currentTarget.value)} />
        </label>
        <label>
          From <input type="datetime-local" value={from()} onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          To <input type="datetime-local" value={to()} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <button type="submit" class="secondary" disabled={loading()}>
          Show
        </button>
      </form>
      <Show when={error()}>
        <Notice kind="error" title="Cannot read the audit log">
          {error()}
        </Notice>
      </Show>
      <Show when={loaded()} fallback={<p role="status">{loading() ? 'Loading the audit log…' : ''}</p>}>
        <Show when={entries().length > 0} fallback={<p class="muted">No entries match.</p>}>
          {/* Scrolls sideways on a phone: focusable, so a keyboard can scroll it too. */}
          <section style={{ 'overflow-x': 'auto' }} tabindex="0" aria-label="Audit log entries">
            <table class="table audit-table" data-testid="audit-entries">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Operation</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">Who</th>
                  <th scope="col">About</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                <For each={entries()}>
                  {(e) => (
                    <tr data-action={e.action} data-outcome={e.outcome}>
                      <td>
                        <time datetime={e.at}>{when(e.at)}</time>
                      </td>
                      <td>{ACTION_WORDS[e.action] ?? e.action}</td>
                      <td title={`HTTP ${String(e.detail.status ?? '')}${e.detail.error ? ` ${String(e.detail.error)}` : ''}`}>
                        {OUTCOME_WORDS[e.outcome] ?? e.outcome}
                      </td>
                      {/* #35: a row of refusals without a token counts them (per address and minute). */}
                      <td>{typeof e.detail.count === 'number' ? `${who(e)} × ${e.detail.count}` : who(e)}</td>
                      <td>{e.target ?? '—'}</td>
                      <td>{e.ip ?? '—'}</td>
                    </tr>
                  )}
                </For>
              </tbody>
            </table>
          </section>
        </Show>
        <Show when={next()}>
          <button type="button" class="secondary" disabled={loading()} onClick={() => void load(true)}>
            {loading() ? 'Loading…' : 'Show older'}
          </button>
        </Show>
      </Show>
    </section>
  );
}
