/**
 * The event processor's state on the dashboard, as the API server relays it (GET /api/processor/status). Shown
 * only when the server has a PROCESSOR_URL; asked again at the dashboard's own cadence while the tab is visible.
 */
import { createSignal, onCleanup, onMount, Show } from 'solid-js';
import type { ProcessorReady, ProcessorStatusResponse } from '../../../shared/api/index';
import { api } from '../lib/api';
import { STATUS_POLL_MS } from '../lib/server-status';

const ROLE_TEXT: Record<ProcessorReady['role'], string> = { polling: 'Polling', standby: 'Standby', stopped: 'Stopped' };

function time(iso: string | null): string {
  if (!iso) return 'never';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
}

/** "12:04:05: ok" / "12:04:05: failed: why" / "not yet". */
function pollText(p: { last_at: string | null; ok: boolean | null; error: string | null }): string {
  if (!p.last_at) return 'not yet';
  return `${time(p.last_at)}: ${p.ok ? 'ok' : `failed${p.error ? `: ${p.error}` : ''}`}`;
}

function brokerText(b: ProcessorReady['broker']): string {
  if (b.kind === 'in-process') return 'In-process queue';
  return `Kafka, ${b.connected ? 'connected' : 'not connected'}`;
}

export function ProcessorCard() {
  const [status, setStatus] = createSignal<ProcessorStatusResponse | null>(null);
  const load = async () => {
    try {
      setStatus(await api.processorStatus());
    } catch {
      // The server itself is unreachable: the dashboard already says so; keep the last state.
    }
  };
  onMount(() => {
    void load();
    const timer = setInterval(() => document.visibilityState === 'visible' && void load(), STATUS_POLL_MS);
    onCleanup(() => clearInterval(timer));
  });

  return (
    <Show when={status()?.configured ? status() : null}>
      {(s) => (
        <section class="card processor-card" aria-labelledby="processor-title" data-testid="processor-card">
          <div class="processor-head">
            <h2 id="processor-title">Event processor</h2>
            <Show
              when={s().processor}
              fallback={
                <span class="chip chip-error" data-testid="processor-state">
                  {s().checked_at ? 'Unreachable' : 'Checking…'}
                </span>
              }
            >
              {(p) => (
                <span class={`chip chip-${p().status === 'ready' ? 'ok' : 'warn'}`} data-testid="processor-state">
                  {p().status === 'ready' ? 'Ready' : 'Not ready'}
                </span>
              )}
            </Show>
          </div>
          <Show when={s().processor} fallback={<p class="processor-error">{s().error ?? 'Waiting for the first check.'}</p>}>
            {(p) => (
              <dl class="facts processor-facts">
                <dt>Broker</dt>
                <dd data-testid="processor-broker">{brokerText(p().broker)}</dd>
                <dt>Role</dt>
                <dd data-testid="processor-role">{ROLE_TEXT[p().role]}</dd>
                <dt>Label poll</dt>
                <dd>{pollText(p().polls.labels)}</dd>
                <Show when={p().polls.remote}>
                  {(r) => (
                    <>
                      <dt>Remote model</dt>
                      <dd>
                        {r().state ?? 'unknown'} ({pollText(r())})
                      </dd>
                    </>
                  )}
                </Show>
                <dt>Queue lag</dt>
                <dd>{p().queue.lag ?? 'unknown'}</dd>
                <dt>Mails</dt>
                <dd data-testid="processor-mails">
                  {p().mail.sent} sent, {p().mail.failed_attempts} failed attempts, {p().mail.dead_lettered} dead-lettered
                </dd>
                <Show when={p().mail.last_error}>
                  <dt>Last mail error</dt>
                  <dd class="processor-error">{p().mail.last_error}</dd>
                </Show>
              </dl>
            )}
          </Show>
          <p class="muted small">Checked {time(s().checked_at)}</p>
        </section>
      )}
    </Show>
  );
}
