/**
 * The event processor's composition root: settings -> broker (Kafka, or the in-process queue on disk), the
 * poller (only while this member leads its group), the mail router consuming the topic, and the health app.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Hono } from 'hono';
import type { ProcessorReady } from '../../shared/api/processor.js';
import { kafkaBrokerList, type ProcessorSettings } from '../config/settings.js';
import { errorBody } from '../http/errors.js';
import { processorOpenApiDocument } from '../http/openapi.js';
import { allowedHostsFor, protectService } from '../http/security.js';
import type { Logger } from '../logger.js';
import { APP_NAME } from '../routes/compat.js';
import { FileQueueBus } from './bus/file-queue.js';
import { serviceFetch } from './service-token.js';
import { KafkaBus, kafkaConnection } from './bus/kafka-bus.js';
import type { EventBus } from './bus/types.js';
import { parseAddress, parseAddressList } from './mail/compose.js';
import { createMailTransport } from './mail/index.js';
import type { MailTransport } from './mail/types.js';
import { metricsResponse } from '../metrics.js';
import { MailRouter, type ModelStatesDoc } from './mail-router.js';
import { createProcessorRegistry } from './metrics.js';
import { emptyLabelsDoc, type LabelsDoc, Poller } from './poller.js';
import { describeError, withoutCredentials } from './safe-text.js';
import { JsonState } from './state/json-state.js';
import { MailLedger } from './state/mail-ledger.js';
import { ProcessorStats } from './stats.js';

export interface ProcessorOptions {
  version: string;
  /** Replaces the transport MAIL_TRANSPORT names (tests). */
  transport?: MailTransport;
  /** Called after each accepted and recorded mail, before its commit (the fault-injection hook). */
  onMailed?: (count: number) => void;
}

export interface Processor {
  /** `GET /health`, `GET /ready`, `GET /openapi.json` (processorRoutes of shared/api/processor.ts), `GET /metrics`. */
  app: Hono;
  ready(): ProcessorReady;
  /** Connects (retrying until the broker answers or close() is called), then consumes and, when leading, polls. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function createProcessor(settings: ProcessorSettings, log: Logger, options: ProcessorOptions): Promise<Processor> {
  const stateDir = settings.processorStateDir;
  await fs.mkdir(stateDir, { recursive: true });
  const startedAt = Date.now();
  const stats = new ProcessorStats();
  const brokers = kafkaBrokerList(settings);
  const bus: EventBus = brokers.length
    ? new KafkaBus({ ...kafkaConnection(settings), groupId: settings.kafkaGroupId, sessionTimeoutMs: settings.kafkaSessionTimeoutMs }, log)
    : new FileQueueBus(path.join(stateDir, 'queue'), log);

  const labels = new JsonState<LabelsDoc>(path.join(stateDir, 'labels.json'), emptyLabelsDoc);
  const modelStates = new JsonState<ModelStatesDoc>(path.join(stateDir, 'model-states.json'), () => ({}));
  const ledger = new MailLedger(path.join(stateDir, 'ledger'));
  await Promise.all([labels.load(), modelStates.load(), ledger.open()]);

  const smtpTls = settings.mailSmtpCaFile ? { tls: { ca: await fs.readFile(settings.mailSmtpCaFile, 'utf8') } } : {};
  const transport = options.transport ?? createMailTransport(settings, smtpTls);
  const remoteUrl = settings.remoteDetectorUrl ? withoutCredentials(settings.remoteDetectorUrl) : '';
  const service = serviceFetch(settings);
  const poller = new Poller(
    {
      backendUrl: settings.processorBackendUrl,
      remoteUrl: settings.remoteDetectorUrl,
      publicRemoteUrl: remoteUrl,
      modelName: settings.remoteDetectorModelName,
      timeoutMs: settings.remoteDetectorTimeoutMs,
      cameraId: settings.processorCameraId,
      source: settings.processorSource,
      topic: settings.kafkaTopicFace,
      announceExisting: settings.processorAnnounceExisting,
      fetch: service?.fetch,
      serviceToken: service?.token,
    },
    bus,
    labels,
    stats,
    log,
  );
  const router = new MailRouter(
    {
      from: parseAddress(settings.mailFrom),
      securityTo: parseAddressList(settings.mailSecurityTo),
      mlopsTo: parseAddressList(settings.mailMlopsTo),
      remoteStatus: settings.mailRemoteStatus,
      maxAttempts: settings.mailMaxAttempts,
      retryBaseMs: settings.mailRetryBaseMs,
      retryMaxMs: settings.mailRetryMaxMs,
      dlqTopic: settings.kafkaTopicFaceDlq,
    },
    { transport, ledger, modelStates, bus, stats, log, onMailed: options.onMailed },
  );

  let closed = false;
  let consuming = false;
  let leading = false;
  let pollTimer: NodeJS.Timeout | null = null;
  let polling: Promise<void> | null = null;

  // One poll at a time, the next one an interval after the previous one ended, only while leading.
  const schedulePoll = (delayMs: number) => {
    if (pollTimer || closed || !leading) return;
    pollTimer = setTimeout(() => {
      pollTimer = null;
      if (closed || !leading) return;
      polling = poller.pollOnce().finally(() => {
        polling = null;
        schedulePoll(settings.processorPollIntervalMs);
      });
    }, delayMs);
  };
  bus.onLeadership((leader) => {
    leading = leader;
    log.info(leader ? 'this processor polls (it leads its group)' : 'this processor stands by (another one polls)');
    if (leader) schedulePoll(0);
    else if (pollTimer) {
      clearTimeout(pollTimer);
      pollTimer = null;
    }
  });

  function ready(): ProcessorReady {
    const b = bus.state();
    // A refused secret keeps the processor from its backend for good: not ready, and why (#28).
    const reason = closed
      ? 'stopping'
      : !b.connected
        ? 'the broker is not connected'
        : !consuming
          ? 'not consuming events yet'
          : stats.credentials;
    return {
      status: reason ? 'not_ready' : 'ready',
      ...(reason ? { reason } : {}),
      version: options.version,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      broker: {
        kind: b.kind,
        connected: b.connected,
        brokers: b.brokers,
        topic: settings.kafkaTopicFace,
        dlq_topic: settings.kafkaTopicFaceDlq,
        group_id: settings.kafkaGroupId,
      },
      role: closed || !consuming ? 'stopped' : leading ? 'polling' : 'standby',
      polls: { interval_ms: settings.processorPollIntervalMs, labels: { ...stats.labels }, remote: remoteUrl ? { ...stats.remote } : null },
      queue: { lag: b.lag, consumed: stats.consumed, unknown_skipped: stats.unknownSkipped, invalid: stats.invalid },
      mail: {
        transport: settings.mailTransport,
        target: transport.target,
        sent: stats.mailsSent,
        failed_attempts: stats.mailFailedAttempts,
        dead_lettered: stats.deadLettered,
        duplicates_skipped: stats.duplicatesSkipped,
        unchanged_skipped: stats.unchangedSkipped,
        last_sent_at: stats.lastSentAt,
        last_error: stats.lastMailError,
      },
    };
  }

  const app = new Hono();
  // Its status and metrics are for the API server and probes, never for other web pages (DNS rebinding).
  protectService(app, { allowedHosts: allowedHostsFor(settings.allowedHosts, settings.host), port: settings.processorPort });
  // The same shapes as the API server's (shared/api): one health body, one error body (with `detail`, #19).
  app.get('/health', (c) =>
    c.json({ status: 'ok' as const, app: APP_NAME, version: options.version, uptime_s: Math.round((Date.now() - startedAt) / 1000) }),
  );
  app.get('/ready', (c) => {
    const body = ready();
    return c.json(body, body.status === 'ready' ? 200 : 503);
  });
  const registry = createProcessorRegistry(stats, () => bus.state());
  app.get('/metrics', (c) => metricsResponse(c, registry));
  let openApi: string | null = null;
  app.get('/openapi.json', (c) => {
    openApi ??= JSON.stringify(processorOpenApiDocument(options.version));
    return c.body(openApi, 200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' });
  });
  app.onError((err, c) => {
    log.error(`processor ${c.req.method} ${c.req.path} failed: ${describeError(err)}`);
    return c.json(errorBody('internal_error', 'the processor failed to answer; it has been logged'), 500);
  });
  app.notFound((c) => c.json(errorBody('not_found', `no such endpoint: ${c.req.method} ${c.req.path}`), 404));

  async function start(): Promise<void> {
    const where = brokers.length
      ? `Kafka at ${brokers.join(',')} (group ${settings.kafkaGroupId})`
      : `the in-process queue in ${path.join(stateDir, 'queue')}`;
    if (!brokers.length)
      log.info('no KAFKA_BROKERS: events go through an in-process queue on disk (one processor; set KAFKA_BROKERS to scale)');
    for (let attempt = 1; !closed; attempt++) {
      try {
        await bus.connect();
        await bus.consume(settings.kafkaTopicFace, router.handle);
        consuming = true;
        log.info(`consuming ${settings.kafkaTopicFace} from ${where}; mails via ${transport.kind} (${transport.target})`);
        return;
      } catch (err) {
        const wait = Math.min(30_000, 1000 * 2 ** Math.min(5, attempt - 1));
        log.warn(`cannot reach ${where}: ${describeError(err)}; trying again in ${wait} ms`);
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  async function close(): Promise<void> {
    closed = true;
    leading = false;
    if (pollTimer) clearTimeout(pollTimer);
    router.stop();
    await polling;
    await bus.disconnect();
    await transport.close();
  }

  return { app, ready, start, close };
}
