/**
 * PPE compliance checks (`/api/ppe/*`). One check, in stages:
 *
 * 1. decode: the image is decoded (400 `invalid_image`, 413 `image_too_large`) and re-encoded as JPEG;
 * 2. detector: the JPEG goes to the PPE detector (detector-client.ts; 503/502/504 when it cannot answer);
 * 3. persons: the detector's `person` boxes, or, when its answer has none, the `person` objects of Lookout's own
 *    object detector on the same decoded image (not ready: no persons, and the log says why);
 * 4. the rule (shared/ppe/rule.ts) decides per person;
 * 5. llm: on a violation only, the chat LLM (the chat's own client and settings) writes a short safety analysis
 *    from the findings, within PPE_LLM_TIMEOUT_MS; chat off, or the LLM failing, leaves it null;
 * 6. the check is kept in the local history, its frame in the dataset (PPE_DATASET_DIR), and it is published as
 *    `ppe_compliance_check` (publish: in the background; a failure never fails the check).
 *
 * A failed stage (decode, detector, persons, llm, publish) puts a `ppe_processing_failed` dead letter on the
 * dead-letter topic (or the local file without Kafka); a failed dead letter is only logged.
 */
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import sharp from 'sharp';
import type { PpeDetectResponse, PpeObject, PpeStatusResponse, ReadyResponse } from '../../shared/api/index.js';
import {
  ppeComplianceCheckEvent,
  type PpeComplianceCheckEvent,
  type PpeFailureStage,
  type PpeProcessingFailedEvent,
} from '../../shared/events/ppe-events.js';
import type { RgbImage } from '../../shared/image/types.js';
import { summarize, type DetectedObject } from '../../shared/objects/types.js';
import { evaluatePpe, hasPersonClass, parseAliases, type PersonBox, type PpeDetection, type PpeVerdict } from '../../shared/ppe/rule.js';
import type { ChatService } from '../chat/chat-service.js';
import type { ChatStatus } from '../chat/chat-status.js';
import { kafkaBrokerList, type Settings } from '../config/settings.js';
import type { ObjectService } from '../engines/objects/object-service.js';
import { ApiError } from '../http/errors.js';
import { type AdmittedImage, decodeBase64Image, type ImageDecoder } from '../imaging/decode.js';
import { ServerBusyError } from '../imaging/pixel-budget.js';
import type { Logger } from '../logger.js';
import { PpeDataset } from './dataset.js';
import { PpeDetectorClient } from './detector-client.js';
import { PpeHistory, type PpeHistoryQuery } from './ppe-history.js';
import { kafkaConnection } from '../processor/bus/kafka-bus.js';
import { DEAD_LETTER_FILE, KafkaPpePublisher, LocalPpePublisher, type PpePublisher } from './ppe-publisher.js';
import { buildSafetyMessages } from './safety-prompt.js';

/** `source` of every event the API server publishes. */
export const PPE_EVENT_SOURCE = 'lookout-api';

/** How long close() waits for publishes still under way. */
const CLOSE_WAIT_MS = 5000;

export type PpeReadiness = ReadyResponse['ppe'];

export interface PpeServiceOptions {
  settings: Settings;
  objects: ObjectService;
  chat: ChatService;
  chatStatus: ChatStatus;
  /** Decodes within the pixel budget (server/imaging/pixel-budget.ts). */
  decoder: ImageDecoder;
  log: Logger;
  /** Called when an upstream fails in a stage the caller is not told about (the LLM analysis, the publish to Kafka). */
  onUpstreamError?: (upstream: 'llm' | 'broker') => void;
}

/** What a dead letter says about the request. */
interface RequestFacts {
  bytes: Uint8Array | null;
  text: string;
  width: number | null;
  height: number | null;
  confidence: number;
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

export class PpeService {
  readonly detector: PpeDetectorClient;
  readonly history: PpeHistory;
  readonly publisher: PpePublisher;
  readonly dataset: PpeDataset | null;
  readonly expected: string[];
  readonly aliases: Map<string, string>;
  private readonly settings: Settings;
  private readonly log: Logger;
  private readonly pending = new Set<Promise<void>>();
  /** Reasons already logged at warn level (later ones go to debug, so a busy camera does not flood the log). */
  private readonly warned = new Set<string>();

  constructor(private readonly opts: PpeServiceOptions) {
    const s = opts.settings;
    this.settings = s;
    this.log = opts.log;
    this.expected = s.ppeExpected.split(',').map((e) => e.trim());
    try {
      this.aliases = parseAliases(s.ppeClassAliases);
    } catch (err) {
      // A typo must not silently change what counts as protection: refuse to start while PPE is on.
      if (s.ppeEnabled)
        throw new Error(messageOf(err).startsWith('PPE_CLASS_ALIASES') ? messageOf(err) : `PPE_CLASS_ALIASES: ${messageOf(err)}`);
      opts.log.warn(`${messageOf(err)}; ignored while PPE_ENABLED=false`);
      this.aliases = new Map();
    }
    this.detector = new PpeDetectorClient({
      endpoint: s.ppeEndpoint,
      timeoutMs: s.ppeTimeoutMs,
      checkIntervalMs: s.ppeCheckIntervalMs,
      log: opts.log,
    });
    const dir = path.join(s.dataDir, 'ppe');
    this.history = new PpeHistory({ dir, max: s.ppeHistoryMax, log: opts.log });
    const brokers = kafkaBrokerList(s);
    // The producer only when checks can run: a Kafka setting meant for the processor must not stop an API server
    // whose PPE checks are off. Nothing connects here (the first publish does).
    if (s.ppeEnabled && brokers.length) {
      try {
        this.publisher = new KafkaPpePublisher({
          connection: kafkaConnection(s),
          topic: s.kafkaTopicPpe,
          dlqTopic: s.kafkaTopicPpeDlq,
          log: opts.log,
        });
      } catch (err) {
        throw new Error(
          `PPE events: the Kafka client cannot be set up (${messageOf(err)}); check KAFKA_SSL_CA_FILE and KAFKA_PASSWORD_FILE`,
        );
      }
    } else {
      this.publisher = new LocalPpePublisher({ dir, max: s.ppeHistoryMax, log: opts.log });
    }
    this.dataset = s.ppeDatasetDir ? new PpeDataset(path.resolve(s.ppeDatasetDir), opts.log) : null;
  }

  async init(): Promise<void> {
    await Promise.all([this.history.init(), this.publisher.init()]);
    if (this.dataset) {
      try {
        await this.dataset.init();
      } catch (err) {
        throw new Error(`PPE_DATASET_DIR: cannot use ${this.dataset.dir} (${(err as NodeJS.ErrnoException).code ?? messageOf(err)})`);
      }
    }
  }

  /** Starts the detector's background health check (resolves after the first one; never rejects). */
  start(): Promise<void> {
    return this.settings.ppeEnabled ? this.detector.start() : Promise.resolve();
  }

  async close(): Promise<void> {
    this.detector.stop();
    if (this.pending.size) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all([...this.pending]), new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await this.publisher.close();
  }

  /** Where checks and dead letters go (as configured: with PPE off, nothing is published at all). */
  private get sink(): 'kafka' | 'history' {
    return kafkaBrokerList(this.settings).length ? 'kafka' : 'history';
  }

  private get deadLetterSink(): string {
    return this.sink === 'kafka'
      ? `kafka topic ${this.settings.kafkaTopicPpeDlq}`
      : `file ${path.join(this.settings.dataDir, 'ppe', DEAD_LETTER_FILE)}`;
  }

  readiness(): PpeReadiness {
    if (!this.settings.ppeEnabled) return 'disabled';
    if (!this.detector.endpoint) return 'not_configured';
    return this.detector.lastHealth.reachable ? 'ready' : 'unreachable';
  }

  /**
   * `ppe_serving` of `GET /api/ready`, as the original answered it: the detector's endpoint (without credentials) and
   * `connected`, `error` (it answered, but cannot take checks), `unreachable` or `unknown` (not checked yet); absent
   * (undefined) unless PPE is switched on with an endpoint.
   */
  serving(): ReadyResponse['ppe_serving'] {
    const endpoint = this.detector.endpoint;
    if (!this.settings.ppeEnabled || !endpoint) return undefined;
    const health = this.detector.lastHealth;
    const status = health.reachable ? 'connected' : health.checkedAt === null ? 'unknown' : health.answered ? 'error' : 'unreachable';
    return { endpoint: endpoint.display, status };
  }

  status(): PpeStatusResponse {
    const health = this.detector.lastHealth;
    let reason: string | null = null;
    if (!this.settings.ppeEnabled) reason = 'PPE checks are switched off (PPE_ENABLED=false)';
    else if (!this.detector.endpoint) reason = 'no PPE detector is configured (set PPE_ENDPOINT)';
    else if (!health.reachable) {
      reason = health.checkedAt === null ? 'the PPE detector has not been checked yet' : `the PPE detector ${health.error}`;
    }
    return {
      enabled: this.settings.ppeEnabled,
      endpoint: this.detector.endpoint?.display ?? null,
      reachable: this.settings.ppeEnabled && health.reachable,
      checked_at: health.checkedAt,
      reason,
      expected: [...this.expected],
      expected_ppe: [...this.expected],
      aliases: Object.fromEntries(this.aliases),
      events: {
        sink: this.sink,
        topic: this.settings.kafkaTopicPpe,
        dlq_topic: this.settings.kafkaTopicPpeDlq,
        // Not in the documented schema (yet): where dead letters go, the topic or the local file.
        dead_letters: this.deadLetterSink,
      },
      history_size: this.history.size,
      dataset: { enabled: this.dataset !== null, images: this.dataset?.images ?? 0 },
    };
  }

  events(q: PpeHistoryQuery) {
    return this.history.query(q);
  }

  async datasetZip(): Promise<ReadableStream<Uint8Array>> {
    if (!this.dataset) throw new ApiError('dataset_disabled', 'No PPE training data is kept on this server (set PPE_DATASET_DIR).');
    return this.dataset.zip();
  }

  /** 503 when checks cannot run at all. */
  private requireAvailable(): void {
    if (!this.settings.ppeEnabled) throw new ApiError('ppe_disabled', 'PPE checks are switched off on this server (PPE_ENABLED=false).');
    if (!this.detector.endpoint)
      throw new ApiError('ppe_not_configured', 'PPE checks need a detector; none is configured (set PPE_ENDPOINT).');
  }

  /** One PPE check of one frame (the image as base64 or a data URL). */
  async check(image: string, confidence?: number): Promise<PpeDetectResponse> {
    this.requireAvailable();
    const id = randomUUID();
    const facts: RequestFacts = {
      bytes: null,
      text: image,
      width: null,
      height: null,
      confidence: confidence ?? this.settings.ppeConfidence,
    };

    // 1. decode, holding a lease of the pixel budget until the pixels are no longer used (after step 3)
    let admitted: AdmittedImage | null = null;
    let rgb: RgbImage;
    let jpeg: Uint8Array;
    try {
      facts.bytes = decodeBase64Image(image);
      admitted = await this.opts.decoder.admit(facts.bytes);
      rgb = admitted.image.rgb;
      jpeg = await encodeJpeg(rgb);
    } catch (err) {
      admitted?.release();
      // A full budget sheds load (503 + Retry-After): the frame was not checked, nothing failed.
      if (err instanceof ServerBusyError) throw err;
      const failure = err instanceof ApiError ? err : new ApiError('invalid_image', `the image could not be prepared (${messageOf(err)})`);
      await this.failed(id, 'decode', failure, facts);
      throw failure;
    }
    const { width, height } = rgb;
    facts.width = width;
    facts.height = height;

    let detections: PpeDetection[];
    let personObjects: DetectedObject[] = [];
    let personBoxes: PersonBox[] | undefined;
    try {
      // 2. detector
      try {
        detections = await this.detector.predict(jpeg, facts.confidence);
      } catch (err) {
        const failure =
          err instanceof ApiError ? err : new ApiError('ppe_detector_failed', `the PPE detector call failed (${messageOf(err)})`);
        this.log.warn(`ppe: check ${id}: ${failure.code}: ${failure.message}`);
        await this.failed(id, 'detector', failure, facts);
        throw failure;
      }

      // 3. persons: the detector's own, else Lookout's object detector's
      if (!hasPersonClass(detections)) {
        personObjects = await this.objectPersons(id, rgb, facts);
        personBoxes = personObjects.map((o) => ({ x: o.x, y: o.y, w: o.w, h: o.h, confidence: o.confidence }));
      }
    } finally {
      admitted.release();
    }

    // 4. the rule
    const verdict = evaluatePpe(detections, { expected: this.expected, aliases: this.aliases }, personBoxes);

    // 5. the safety analysis, on a violation only
    const analysis = verdict.ppe_status === 'violation' ? await this.analyse(id, verdict, facts) : null;

    // 6. keep and publish
    const timestamp = new Date().toISOString();
    const event: PpeComplianceCheckEvent = ppeComplianceCheckEvent.parse({
      event_type: 'ppe_compliance_check',
      source: PPE_EVENT_SOURCE,
      timestamp,
      ppe_status: verdict.ppe_status,
      person_count: verdict.person_count,
      expected_ppe: verdict.expected_ppe,
      present_ppe: verdict.present_ppe,
      missing_ppe: verdict.missing_ppe,
      detections: detections.map((d) => ({ class_name: d.class_name, confidence: d.confidence, bbox: { ...d.bbox } })),
      llm_analysis: analysis ?? '',
      persons: verdict.persons,
    } satisfies PpeComplianceCheckEvent);
    await Promise.all([
      this.history
        .add({ ...event, id })
        .catch((err: unknown) => this.log.error(`ppe: check ${id} could not be kept in the history (${messageOf(err)})`)),
      this.dataset
        ?.add(id, jpeg, detections, width, height)
        .catch((err: unknown) => this.log.error(`ppe: the frame of check ${id} could not be saved to the dataset (${messageOf(err)})`)),
    ]);
    this.publish(id, event, facts);

    const objects: PpeObject[] = [
      ...verdict.detections.map((d) => ({
        ...withCorners(box(d.bbox)),
        class_id: d.class_id,
        class_name: d.class_name,
        confidence: d.confidence,
        item: d.item,
        absent: d.absent,
        source: 'ppe_detector' as const,
      })),
      ...personObjects.map((o) => ({
        class_id: o.class_id,
        class_name: o.class_name,
        confidence: o.confidence,
        ...withCorners({ x: Math.round(o.x), y: Math.round(o.y), w: Math.round(o.w), h: Math.round(o.h) }),
        item: null,
        absent: false,
        source: 'object_detector' as const,
      })),
    ];
    return {
      id,
      timestamp,
      objects,
      count: objects.length,
      summary: summarize(objects),
      ppe_status: verdict.ppe_status,
      person_count: verdict.person_count,
      expected_ppe: verdict.expected_ppe,
      present_ppe: verdict.present_ppe,
      missing_ppe: verdict.missing_ppe,
      persons: verdict.persons,
      llm_analysis: analysis,
      width,
      height,
    };
  }

  /** The object detector's persons on the frame; none (and the reason logged) when it cannot tell. */
  private async objectPersons(id: string, rgb: RgbImage, facts: RequestFacts): Promise<DetectedObject[]> {
    const objects = this.opts.objects;
    // #38 2: a detector not loaded yet (or let go) loads for this frame; one switched off or broken cannot answer.
    if (!objects.status().available) {
      const why = objects.status().reason ?? `the object detector is ${objects.readiness}`;
      this.note(`ppe: the detector found no person class and the object detector is not available (${why}): no persons`, `persons:${why}`);
      return [];
    }
    try {
      return (await objects.detectDecoded(rgb)).objects.filter((o) => o.class_name === 'person');
    } catch (err) {
      const failure = err instanceof ApiError ? err : new ApiError('detector_unavailable', messageOf(err));
      this.log.warn(`ppe: check ${id}: the object detector failed (${failure.message}): no persons`);
      await this.failed(id, 'persons', failure, facts);
      return [];
    }
  }

  /** The LLM's safety analysis of a violation; null when chat is off or the LLM failed (the reason logged). */
  private async analyse(id: string, verdict: PpeVerdict, facts: RequestFacts): Promise<string | null> {
    try {
      this.opts.chatStatus.requireClient();
    } catch (err) {
      this.note(`ppe: no safety analysis: ${messageOf(err)}`, `llm-off:${messageOf(err)}`);
      return null;
    }
    const budget = this.settings.ppeLlmTimeoutMs;
    const signal = AbortSignal.timeout(budget);
    try {
      const text = (await this.opts.chat.complete(buildSafetyMessages(verdict), signal)).trim();
      if (!text) this.log.warn(`ppe: check ${id}: the LLM answered the safety analysis with an empty text`);
      return text || null;
    } catch (err) {
      const failure = signal.aborted
        ? { code: 'llm_timeout', message: `the LLM did not finish the safety analysis within ${budget} ms (PPE_LLM_TIMEOUT_MS)` }
        : { code: err instanceof ApiError ? err.code : 'llm_failed', message: messageOf(err) };
      this.log.warn(`ppe: check ${id}: no safety analysis (${failure.code}: ${failure.message})`);
      await this.failed(id, 'llm', failure, facts);
      return null;
    }
  }

  /** Publishes a check in the background; a failure is logged and dead-lettered, never the caller's problem. */
  private publish(id: string, event: PpeComplianceCheckEvent, facts: RequestFacts): void {
    if (this.publisher.sink !== 'kafka') return;
    this.track(
      this.publisher.publishCheck(id, event).catch(async (err: unknown) => {
        const message = messageOf(err);
        this.log.warn(`ppe: check ${id} could not be published to ${this.settings.kafkaTopicPpe} (${message}); it is kept in the history`);
        await this.failed(id, 'publish', { code: 'publish_failed', message }, facts);
      }),
    );
  }

  /**
   * Dead-letters a failed stage (never rejects). To the local file: resolves once written. To Kafka: in the
   * background (a broker that is down must not hold the answer), resolves at once.
   */
  private failed(id: string, stage: PpeFailureStage, error: { code: string; message: string }, facts: RequestFacts): Promise<void> {
    if (stage === 'llm') this.opts.onUpstreamError?.('llm');
    else if (stage === 'publish') this.opts.onUpstreamError?.('broker');
    const letter: PpeProcessingFailedEvent = {
      event_type: 'ppe_processing_failed',
      timestamp: new Date().toISOString(),
      stage,
      error: { code: error.code, message: error.message },
      request: {
        image_sha256: createHash('sha256')
          .update(facts.bytes ?? Buffer.from(facts.text, 'utf8'))
          .digest('hex'),
        width: facts.width,
        height: facts.height,
        confidence: facts.confidence,
      },
      attempt: 1,
    };
    const sent = this.publisher
      .publishDeadLetter(id, letter)
      .catch((err: unknown) =>
        this.log.error(
          `ppe: the dead letter of check ${id} (stage ${stage}) could not be written to ${this.publisher.deadLetters} (${messageOf(err)})`,
        ),
      );
    if (this.publisher.sink === 'kafka') {
      this.track(sent);
      return Promise.resolve();
    }
    return sent;
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  /** Logs a recurring condition: at warn level the first time, at debug level after that. */
  private note(message: string, key: string): void {
    if (this.warned.has(key)) this.log.debug(message);
    else {
      this.warned.add(key);
      this.log.warn(message);
    }
  }
}

/** The box beside its corners, `bbox` (the original's v1.5.0 PPE page draws from them). */
function withCorners(b: { x: number; y: number; w: number; h: number }) {
  return { ...b, bbox: { x1: b.x, y1: b.y, x2: b.x + b.w, y2: b.y + b.h } };
}

/** A detector box as integer pixels, top-left corner plus size. */
function box(b: PpeDetection['bbox']): { x: number; y: number; w: number; h: number } {
  const x = Math.round(b.x1);
  const y = Math.round(b.y1);
  return { x, y, w: Math.max(0, Math.round(b.x2) - x), h: Math.max(0, Math.round(b.y2) - y) };
}

/** The frame as the detector gets it: JPEG of the decoded (upright) pixels, so its boxes match width x height. */
async function encodeJpeg(rgb: RgbImage): Promise<Uint8Array> {
  const buf = await sharp(rgb.data, { raw: { width: rgb.width, height: rgb.height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
}
