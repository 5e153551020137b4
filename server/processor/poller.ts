/**
 * The polling half of the processor: every interval it reads the backend's labels (and its active detection
 * method) and, when a remote model server is configured, that server's `/v1/config`, and publishes
 * `person_registered` for each new label and `remote_model_status` for each answer (or for no answer).
 *
 * Labels are announced exactly once per registration: a new label is first written down as pending with the
 * event id it will carry, published, and moved to "seen" only once the broker acknowledged it. A publish that
 * failed (broker down) is tried again at the next poll with the same event id, so even a publish that reached
 * the broker before it timed out is mailed once (the mail ledger keys on the id). A label that disappears is
 * forgotten, so a person registered again is announced again.
 */
import { randomUUID } from 'node:crypto';
import { createLookoutClient, LookoutError } from '../../shared/api/index.js';
import {
  EVENT_ID_HEADER,
  type PersonRegisteredEvent,
  type RemoteModelStatusEvent,
  remoteModelState,
} from '../../shared/events/face-events.js';
import { modelConfigStatus } from '../../shared/kserve/protocol.js';
import type { Logger } from '../logger.js';
import type { EventBus } from './bus/types.js';
import { describeError } from './safe-text.js';
import { type ServiceToken, ServiceTokenError } from './service-token.js';
import type { JsonState } from './state/json-state.js';
import type { ProcessorStats } from './stats.js';

export interface LabelsDoc {
  /** Labels announced (acknowledged by the broker) or recorded silently on the first start. */
  seen: Record<string, { announced_at: string | null }>;
  /** Labels found but not acknowledged yet, with the id their event carries on every try. */
  pending: Record<string, { event_id: string; first_seen: string }>;
}

export const emptyLabelsDoc = (): LabelsDoc => ({ seen: {}, pending: {} });

export interface PollerOptions {
  backendUrl: string;
  /** Empty: no remote model server, no status events. */
  remoteUrl: string;
  /** The same without credentials: what events carry as `model_server`. */
  publicRemoteUrl: string;
  modelName: string;
  timeoutMs: number;
  cameraId: string;
  source: string;
  topic: string;
  announceExisting: boolean;
  /** The fetch the backend is called with (the service token's under AUTH_MODE=oidc); default the global one. */
  fetch?: (url: string, init?: RequestInit) => Promise<Response>;
  /** That fetch's service token, got before each poll: a refused secret is a credentials failure, not an unreachable backend. */
  serviceToken?: Pick<ServiceToken, 'get'>;
}

export class Poller {
  private readonly client;

  constructor(
    private readonly opts: PollerOptions,
    private readonly bus: EventBus,
    private readonly labels: JsonState<LabelsDoc>,
    private readonly stats: ProcessorStats,
    private readonly log: Logger,
  ) {
    this.client = createLookoutClient({ baseUrl: opts.backendUrl, fetch: opts.fetch });
  }

  /** One poll of both sources; never throws (failures are logged and shown by /ready). */
  async pollOnce(): Promise<void> {
    await Promise.all([this.pollLabels(), this.opts.remoteUrl ? this.pollRemote() : Promise.resolve()]);
  }

  private common() {
    return { timestamp: new Date().toISOString(), source: this.opts.source, camera_id: this.opts.cameraId };
  }

  async pollLabels(): Promise<void> {
    const s = this.stats.labels;
    try {
      await this.opts.serviceToken?.get();
      this.stats.credentials = null;
      const init = { signal: AbortSignal.timeout(this.opts.timeoutMs) };
      const [list, config] = await Promise.all([
        this.client.call('labels', undefined, init),
        this.client.call('modelsConfig', undefined, init),
      ]);
      const counts = new Map(list.details.map((d) => [d.label, d.images]));
      for (const label of list.labels) if (!counts.has(label)) counts.set(label, 0);
      await this.announce(counts, config.detection_method);
      s.ok = true;
      s.error = null;
    } catch (err) {
      s.ok = false;
      if (err instanceof ServiceTokenError) this.stats.credentials = err.kind === 'unreachable' ? null : err.message;
      s.error =
        err instanceof ServiceTokenError
          ? err.message
          : err instanceof LookoutError && err.code === 'network'
            ? `backend unreachable (${this.opts.backendUrl})`
            : describeError(err);
      this.log.warn(`labels poll failed: ${s.error}`);
    } finally {
      s.last_at = new Date().toISOString();
      const doc = this.labels.current;
      s.known_labels = Object.keys(doc.seen).length;
      s.pending = Object.keys(doc.pending).length;
    }
  }

  private async announce(counts: Map<string, number>, detectionMethod: string): Promise<void> {
    const doc = this.labels.current;
    const current = new Set(counts.keys());
    const firstStart = !this.labels.wasOnDisk;
    if (firstStart && !this.opts.announceExisting) {
      await this.labels.update((d) => {
        for (const label of current) d.seen[label] = { announced_at: null };
      });
      this.log.info(`first start: ${current.size} existing label(s) recorded without announcing them (PROCESSOR_ANNOUNCE_EXISTING=false)`);
      return;
    }
    const gone = Object.keys(doc.seen).filter((l) => !current.has(l));
    const fresh = [...current].filter((l) => !doc.seen[l] && !doc.pending[l]);
    const goneFromPending = Object.keys(doc.pending).filter((l) => !current.has(l));
    if (gone.length || fresh.length || goneFromPending.length || firstStart) {
      const now = new Date().toISOString();
      await this.labels.update((d) => {
        for (const l of gone) delete d.seen[l];
        for (const l of goneFromPending) delete d.pending[l];
        for (const l of fresh) d.pending[l] = { event_id: randomUUID(), first_seen: now };
      });
    }
    const pending = Object.entries(this.labels.current.pending);
    if (pending.length === 0) return;
    const messages = pending.map(([label, { event_id }]) => {
      const event: PersonRegisteredEvent = {
        event_type: 'person_registered',
        ...this.common(),
        person_name: label,
        face_count: counts.get(label) ?? 0,
        detection_method: detectionMethod,
      };
      return { key: label, value: JSON.stringify(event), headers: { [EVENT_ID_HEADER]: event_id } };
    });
    // Only acknowledged events leave "pending": a failure here keeps them for the next poll, same ids.
    await this.bus.publish(this.opts.topic, messages);
    const at = new Date().toISOString();
    await this.labels.update((d) => {
      for (const [label] of pending) {
        delete d.pending[label];
        d.seen[label] = { announced_at: at };
      }
    });
    this.stats.published += messages.length;
    this.stats.labels.announced += messages.length;
    this.log.info(`announced ${messages.length} new label(s): ${pending.map(([l]) => l).join(', ')}`);
  }

  async pollRemote(): Promise<void> {
    const s = this.stats.remote;
    const base = this.opts.remoteUrl.replace(/\/+$/, '');
    let event: RemoteModelStatusEvent;
    try {
      const res = await fetch(`${base}/v1/config`, { signal: AbortSignal.timeout(this.opts.timeoutMs) });
      if (!res.ok) throw new Error(`the model server answered ${res.status}`);
      const body: unknown = await res.json().catch(() => {
        throw new Error('the model server answered something other than JSON');
      });
      if (!modelConfigStatus.safeParse(body).success) throw new Error('the model server answered an unexpected /v1/config body');
      event = {
        event_type: 'remote_model_status',
        ...this.common(),
        model_name: this.opts.modelName,
        model_server: this.opts.publicRemoteUrl,
        remote_response: body as Record<string, never>,
      };
      s.ok = true;
      s.error = null;
    } catch (err) {
      s.ok = false;
      s.error = describeError(err);
      event = {
        event_type: 'remote_model_status',
        ...this.common(),
        model_name: this.opts.modelName,
        model_server: this.opts.publicRemoteUrl,
        remote_response: {},
        reachable: false,
      };
    }
    s.state = remoteModelState(event);
    s.last_at = new Date().toISOString();
    try {
      await this.bus.publish(this.opts.topic, [
        { key: this.opts.modelName, value: JSON.stringify(event), headers: { [EVENT_ID_HEADER]: randomUUID() } },
      ]);
      this.stats.published++;
    } catch (err) {
      // A status is a snapshot: the next poll publishes a fresh one, nothing to keep.
      this.log.warn(`remote model status not published: ${describeError(err)}`);
      s.error = `not published: ${describeError(err)}`;
    }
  }
}
