/**
 * Where PPE events go. With KAFKA_BROKERS set: every check to KAFKA_TOPIC_PPE (key and header `event_id` = the
 * check id) and every dead letter to KAFKA_TOPIC_PPE_DLQ, through one kafkajs producer (built with the processor's
 * `kafkaClientConfig`, acks from all in-sync replicas, connected at the first publish). Without Kafka the checks
 * stay in the local history only (kept by the service either way) and dead letters go to a bounded local file,
 * `DATA_DIR/ppe/dead-letters.json`.
 *
 * Everything published is validated with the event schemas first (shared/events/ppe-events.ts).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Kafka, Partitioners, type Producer } from 'kafkajs';
import {
  ppeComplianceCheckEvent,
  ppeProcessingFailedEvent,
  type PpeComplianceCheckEvent,
  type PpeProcessingFailedEvent,
} from '../../shared/events/ppe-events.js';
import type { Logger } from '../logger.js';
import { type KafkaConnectionOptions, kafkaClientConfig } from '../processor/bus/kafka-bus.js';
import { BoundedLog } from './bounded-log.js';

export const DEAD_LETTER_FILE = 'dead-letters.json';

export interface PpePublisher {
  readonly sink: 'kafka' | 'history';
  /** Where dead letters go, in words (`kafka topic dlq.ppe-errors`, `file .../dead-letters.json`). */
  readonly deadLetters: string;
  init(): Promise<void>;
  /** Publishes one check; rejects when it could not be published (without Kafka: resolves, nothing to do). */
  publishCheck(id: string, event: PpeComplianceCheckEvent): Promise<void>;
  /** Puts one dead letter (key: the failed check's id) on the dead-letter topic or in the local file; rejects when that failed. */
  publishDeadLetter(key: string, event: PpeProcessingFailedEvent): Promise<void>;
  close(): Promise<void>;
}

export interface KafkaPpePublisherOptions {
  connection: KafkaConnectionOptions;
  topic: string;
  dlqTopic: string;
  log: Logger;
}

export class KafkaPpePublisher implements PpePublisher {
  readonly sink = 'kafka' as const;
  readonly deadLetters: string;
  private readonly producer: Producer;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly opts: KafkaPpePublisherOptions) {
    const kafka = new Kafka(kafkaClientConfig(opts.connection, opts.log));
    this.producer = kafka.producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.connecting = null;
    });
    this.deadLetters = `kafka topic ${opts.dlqTopic}`;
  }

  async init(): Promise<void> {
    // Connected lazily: a broker that is down at start must not stop the API server.
  }

  private connect(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the PPE event producer is closed'));
    this.connecting ??= this.producer.connect().catch((err: unknown) => {
      this.connecting = null;
      throw err;
    });
    return this.connecting;
  }

  private async send(topic: string, key: string, eventId: string, value: unknown): Promise<void> {
    await this.connect();
    await this.producer.send({
      topic,
      acks: -1,
      timeout: this.opts.connection.requestTimeoutMs,
      messages: [{ key, value: JSON.stringify(value), headers: { event_id: eventId } }],
    });
  }

  publishCheck(id: string, event: PpeComplianceCheckEvent): Promise<void> {
    return this.send(this.opts.topic, id, id, ppeComplianceCheckEvent.parse(event));
  }

  /** Keyed by the check's id (its failures share a partition); the header `event_id` is the dead letter's own id. */
  publishDeadLetter(key: string, event: PpeProcessingFailedEvent): Promise<void> {
    return this.send(this.opts.dlqTopic, key, randomUUID(), ppeProcessingFailedEvent.parse(event));
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.producer.disconnect().catch(() => {});
  }
}

/** No Kafka: checks live in the history only; dead letters in a bounded local file. */
export class LocalPpePublisher implements PpePublisher {
  readonly sink = 'history' as const;
  readonly deadLetters: string;
  private readonly letters: BoundedLog<PpeProcessingFailedEvent>;

  constructor(opts: { dir: string; max: number; log: Logger }) {
    const file = path.join(opts.dir, DEAD_LETTER_FILE);
    this.letters = new BoundedLog({
      file,
      format: 'lookout-ppe-dead-letters',
      max: opts.max,
      record: ppeProcessingFailedEvent,
      log: opts.log,
      what: 'PPE dead letters',
    });
    this.deadLetters = `file ${file}`;
  }

  init(): Promise<void> {
    return this.letters.init();
  }

  async publishCheck(): Promise<void> {}

  publishDeadLetter(_key: string, event: PpeProcessingFailedEvent): Promise<void> {
    return this.letters.add(ppeProcessingFailedEvent.parse(event));
  }

  /** Newest first (tests and operators read the file; this is the same). */
  deadLetterList(): PpeProcessingFailedEvent[] {
    return this.letters.newestFirst();
  }

  async close(): Promise<void> {
    await this.letters.flush().catch(() => {});
  }
}
