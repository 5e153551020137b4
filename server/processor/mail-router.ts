/**
 * The consuming half of the processor: routes each event of the topic by `event_type` to a mail for the team
 * that cares (`person_registered` -> security, `remote_model_status` -> ML operations, the latter only when the
 * model's state changed since its last mail unless MAIL_REMOTE_STATUS=every), and delivers it at least once and
 * mails it once: an event already in the ledger is skipped, a failing sink is retried with backoff, and after
 * MAIL_MAX_ATTEMPTS the event goes to the dead-letter topic with the error. The handler resolves only once the
 * event is settled (mailed, skipped or dead-lettered), which is when the bus commits it.
 */
import { createHash } from 'node:crypto';
import {
  EVENT_ID_HEADER,
  type FaceEvent,
  faceEvent,
  type RemoteModelStatusEvent,
  remoteModelState,
} from '../../shared/events/face-events.js';
import type { Logger } from '../logger.js';
import type { EventBus, HandlerContext, IncomingMessage } from './bus/types.js';
import { composePersonRegisteredMail, composeRemoteStatusMail } from './mail/compose.js';
import { type MailAddress, MailError, type MailMessage, type MailTransport } from './mail/types.js';
import { describeError } from './safe-text.js';
import type { JsonState } from './state/json-state.js';
import type { MailLedger } from './state/mail-ledger.js';
import type { ProcessorStats } from './stats.js';

export interface MailRouterOptions {
  from: MailAddress;
  securityTo: MailAddress[];
  mlopsTo: MailAddress[];
  remoteStatus: 'changes' | 'every';
  maxAttempts: number;
  retryBaseMs: number;
  retryMaxMs: number;
  dlqTopic: string;
}

/** Last mailed state of each remote model (`AVAILABLE`, `unreachable`, ...), kept on disk across restarts. */
export type ModelStatesDoc = Record<string, string>;

export interface MailRouterDeps {
  transport: MailTransport;
  ledger: MailLedger;
  modelStates: JsonState<ModelStatesDoc>;
  bus: EventBus;
  stats: ProcessorStats;
  log: Logger;
  /** Called after each mail was accepted and recorded, before its offset is committed. */
  onMailed?: (count: number) => void;
}

/** Wait before try `attempt + 1` (attempt counts from 1): base, 2 x base, 4 x base, ... capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(30, attempt - 1));
}

class ShuttingDown extends Error {}

export class MailRouter {
  private stopping = false;
  private readonly wakers = new Set<() => void>();

  constructor(
    private readonly opts: MailRouterOptions,
    private readonly deps: MailRouterDeps,
  ) {}

  /** Stops retrying: an event in its retry wait is left uncommitted, to be handled after a restart. */
  stop(): void {
    this.stopping = true;
    for (const wake of this.wakers) wake();
  }

  readonly handle = async (message: IncomingMessage, ctx: HandlerContext): Promise<void> => {
    const { stats, log, ledger } = this.deps;
    stats.consumed++;
    const eventId = message.headers[EVENT_ID_HEADER] || `h-${createHash('sha256').update(message.value).digest('hex').slice(0, 40)}`;
    if (await ledger.has(eventId)) {
      stats.duplicatesSkipped++;
      log.debug(`event ${eventId} was handled before; skipped`);
      return;
    }
    let raw: unknown;
    try {
      raw = JSON.parse(message.value);
    } catch {
      stats.invalid++;
      return this.deadLetter(message, eventId, message.value, 'the message is not JSON', 0);
    }
    const type = (raw as { event_type?: unknown } | null)?.event_type;
    if (type !== 'person_registered' && type !== 'remote_model_status') {
      stats.unknownSkipped++;
      log.warn(`skipped an event of unknown type ${JSON.stringify(type)} (${message.topic}/${message.partition}@${message.offset})`);
      return;
    }
    const parsed = faceEvent.safeParse(raw);
    if (!parsed.success) {
      stats.invalid++;
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(event)'}: ${i.message}`).join('; ');
      return this.deadLetter(message, eventId, raw, `invalid ${type} event: ${why}`, 0);
    }
    const event = parsed.data;
    let mail: MailMessage;
    let newState: string | null = null;
    if (event.event_type === 'person_registered') {
      mail = composePersonRegisteredMail(event, { from: this.opts.from, to: this.opts.securityTo, eventId });
    } else {
      newState = remoteModelState(event);
      const previous = this.deps.modelStates.current[event.model_name] ?? null;
      if (this.opts.remoteStatus === 'changes' && previous === newState) {
        stats.unchangedSkipped++;
        return;
      }
      mail = composeRemoteStatusMail(event, { from: this.opts.from, to: this.opts.mlopsTo, eventId, previousState: previous });
    }
    const failure = await this.deliver(mail, ctx);
    if (failure) return this.deadLetter(message, eventId, event, failure.error, failure.attempts);
    await ledger.record(eventId, 'mailed');
    if (newState !== null) await this.rememberState(event as RemoteModelStatusEvent, newState);
    stats.mailsSent++;
    stats.lastSentAt = new Date().toISOString();
    log.info(`mailed ${describeEvent(event)} to ${mail.to.map((t) => t.email).join(', ')}`);
    this.deps.onMailed?.(stats.mailsSent);
  };

  private async rememberState(event: RemoteModelStatusEvent, state: string): Promise<void> {
    await this.deps.modelStates.update((d) => {
      d[event.model_name] = state;
    });
  }

  /** Tries the mail until accepted; resolves with the last error when every attempt failed or one was permanent. */
  private async deliver(mail: MailMessage, ctx: HandlerContext): Promise<{ error: string; attempts: number } | null> {
    const { stats, log, transport } = this.deps;
    for (let attempt = 1; ; attempt++) {
      if (this.stopping) throw new ShuttingDown('the processor is stopping');
      try {
        await transport.send(mail);
        return null;
      } catch (err) {
        stats.mailFailedAttempts++;
        const error = describeError(err);
        stats.lastMailError = error;
        const permanent = err instanceof MailError && err.permanent;
        if (permanent || attempt >= this.opts.maxAttempts) {
          log.error(`mail "${mail.subject}" failed ${attempt} time(s), last: ${error}${permanent ? ' (permanent)' : ''}`);
          return { error, attempts: attempt };
        }
        const wait = backoffMs(attempt, this.opts.retryBaseMs, this.opts.retryMaxMs);
        log.warn(`mail "${mail.subject}" failed (try ${attempt} of ${this.opts.maxAttempts}): ${error}; next try in ${wait} ms`);
        await this.sleep(wait, ctx);
      }
    }
  }

  /** Waits, telling the group this member is alive meanwhile; a stop cuts it short. */
  private async sleep(ms: number, ctx: HandlerContext): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopping && Date.now() < until) {
      let wake = () => {};
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(1000, until - Date.now()));
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        this.wakers.add(wake);
      });
      this.wakers.delete(wake);
      await ctx.heartbeat().catch(() => {});
    }
  }

  /** Publishes the event with the reason to the dead-letter topic, then records it as settled. */
  private async deadLetter(message: IncomingMessage, eventId: string, event: unknown, error: string, attempts: number): Promise<void> {
    const { stats, log, ledger, bus } = this.deps;
    const letter = {
      event_id: eventId,
      error,
      attempts,
      failed_at: new Date().toISOString(),
      origin: { topic: message.topic, partition: message.partition, offset: message.offset, key: message.key },
      event,
    };
    // If this publish fails the handler fails: the event is not committed and comes again.
    await bus.publish(this.opts.dlqTopic, [{ key: message.key, value: JSON.stringify(letter), headers: { [EVENT_ID_HEADER]: eventId } }]);
    await ledger.record(eventId, 'dead_lettered');
    stats.deadLettered++;
    log.error(`event ${eventId} sent to ${this.opts.dlqTopic}: ${error}`);
  }
}

function describeEvent(event: FaceEvent): string {
  return event.event_type === 'person_registered'
    ? `person_registered ${JSON.stringify(event.person_name)}`
    : `remote_model_status ${event.model_name}=${remoteModelState(event)}`;
}
