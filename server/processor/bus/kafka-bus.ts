/**
 * The event bus on Kafka (kafkajs): publishes with acks from all in-sync replicas, consumes in a consumer group
 * with offsets committed only after the handler finished (at least once), and elects the poller: the member
 * that holds partition 0 of the consumed topic, so one processor of a group polls and the others stand by.
 */
import fs from 'node:fs';
import { Kafka, type KafkaConfig, logLevel, Partitioners, type Consumer, type Producer, type SASLOptions } from 'kafkajs';
import { kafkaBrokerList, type Settings } from '../../config/settings.js';
import type { Logger } from '../../logger.js';
import type { BusState, EventBus, MessageHandler, OutgoingMessage } from './types.js';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  groupId: string;
  ssl: boolean;
  sslCaFile: string;
  saslMechanism: '' | 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
  passwordFile: string;
  requestTimeoutMs: number;
  sessionTimeoutMs: number;
}

/** What a client needs to reach the brokers (no consumer group): the API server's PPE producer uses it too. */
export type KafkaConnectionOptions = Omit<KafkaBusOptions, 'groupId' | 'sessionTimeoutMs'>;

/** The connection the KAFKA_* settings describe (shared by the processor and the API server's PPE events). */
export function kafkaConnection(s: Settings): KafkaConnectionOptions {
  return {
    brokers: kafkaBrokerList(s),
    clientId: s.kafkaClientId,
    ssl: s.kafkaSsl,
    sslCaFile: s.kafkaSslCaFile,
    saslMechanism: s.kafkaSaslMechanism,
    username: s.kafkaUsername,
    password: s.kafkaPassword,
    passwordFile: s.kafkaPasswordFile,
    requestTimeoutMs: s.kafkaRequestTimeoutMs,
  };
}

/** kafkajs' client options from ours: TLS with an optional private CA, SASL with the password from a file or the setting. */
export function kafkaClientConfig(
  opts: KafkaConnectionOptions,
  log: Logger,
  readFile = (f: string) => fs.readFileSync(f, 'utf8'),
): KafkaConfig {
  let sasl: SASLOptions | undefined;
  if (opts.saslMechanism) {
    const password = opts.passwordFile ? readFile(opts.passwordFile).trim() : opts.password;
    sasl = { mechanism: opts.saslMechanism, username: opts.username, password } as SASLOptions;
  }
  const ssl = opts.sslCaFile ? { ca: [readFile(opts.sslCaFile)] } : opts.ssl;
  return {
    clientId: opts.clientId,
    brokers: opts.brokers,
    ssl,
    sasl,
    connectionTimeout: Math.min(opts.requestTimeoutMs, 5000),
    requestTimeout: opts.requestTimeoutMs,
    retry: { initialRetryTime: 300, retries: 3 },
    logLevel: logLevel.WARN,
    // kafkajs' entries carry broker addresses and error codes, never the SASL password.
    logCreator: () => (entry) => {
      const line = `kafka: ${entry.log.message}${entry.log.error ? ` (${entry.log.error})` : ''}`;
      if (entry.level === logLevel.ERROR) log.error(line);
      else if (entry.level === logLevel.WARN) log.warn(line);
      else log.debug(line);
    },
  };
}

export class KafkaBus implements EventBus {
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly consumer: Consumer;
  private producerUp = false;
  private consumerUp = false;
  private leader = false;
  private consumedTopic: string | null = null;
  private readonly lagByPartition = new Map<number, number>();
  private readonly listeners: ((leader: boolean) => void)[] = [];

  constructor(
    private readonly opts: KafkaBusOptions,
    private readonly log: Logger,
  ) {
    this.kafka = new Kafka(kafkaClientConfig(opts, log));
    this.producer = this.kafka.producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner });
    this.consumer = this.kafka.consumer({
      groupId: opts.groupId,
      sessionTimeout: opts.sessionTimeoutMs,
      heartbeatInterval: Math.max(100, Math.floor(opts.sessionTimeoutMs / 10)),
      rebalanceTimeout: Math.max(opts.sessionTimeoutMs, 10_000),
      allowAutoTopicCreation: true,
    });
    const { events: pe } = this.producer;
    this.producer.on(pe.CONNECT, () => (this.producerUp = true));
    this.producer.on(pe.DISCONNECT, () => (this.producerUp = false));
    const { events: ce } = this.consumer;
    this.consumer.on(ce.GROUP_JOIN, (e) => {
      this.consumerUp = true;
      const mine = this.consumedTopic ? (e.payload.memberAssignment[this.consumedTopic] ?? []) : [];
      for (const p of [...this.lagByPartition.keys()]) if (!mine.includes(p)) this.lagByPartition.delete(p);
      this.log.info(`kafka: joined group ${opts.groupId} with partitions [${mine.join(', ')}] of ${this.consumedTopic}`);
      this.setLeader(mine.includes(0));
    });
    this.consumer.on(ce.FETCH, () => (this.consumerUp = true));
    this.consumer.on(ce.END_BATCH_PROCESS, (e) => this.lagByPartition.set(e.payload.partition, Number(e.payload.offsetLag)));
    this.consumer.on(ce.REBALANCING, () => this.setLeader(false));
    this.consumer.on(ce.REQUEST_TIMEOUT, () => (this.consumerUp = false));
    this.consumer.on(ce.CRASH, (e) => {
      this.consumerUp = false;
      this.setLeader(false);
      this.log.warn(`kafka: consumer crashed (${e.payload.error?.message}); ${e.payload.restart ? 'restarting' : 'stopped'}`);
    });
    this.consumer.on(ce.DISCONNECT, () => {
      this.consumerUp = false;
      this.setLeader(false);
    });
  }

  private setLeader(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    for (const listener of this.listeners) listener(leader);
  }

  async connect(): Promise<void> {
    await this.producer.connect();
    await this.consumer.connect();
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    try {
      await this.producer.send({ topic, acks: -1, timeout: this.opts.requestTimeoutMs, messages });
      this.producerUp = true;
    } catch (err) {
      this.producerUp = false;
      throw err;
    }
  }

  async consume(topic: string, handler: MessageHandler): Promise<void> {
    this.consumedTopic = topic;
    await this.consumer.subscribe({ topics: [topic], fromBeginning: true });
    await this.consumer.run({
      autoCommit: false,
      // Partitions are independent (a key's events stay in one): mails of different partitions go out side by side.
      partitionsConsumedConcurrently: 4,
      eachMessage: async ({ topic: t, partition, message, heartbeat }) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(message.headers ?? {})) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? String(v[0]) : String(v);
        }
        await handler(
          {
            topic: t,
            partition,
            offset: message.offset,
            key: message.key?.toString() ?? '',
            value: message.value?.toString() ?? '',
            headers,
          },
          { heartbeat },
        );
        await this.consumer.commitOffsets([{ topic: t, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
      },
    });
  }

  onLeadership(listener: (leader: boolean) => void): void {
    this.listeners.push(listener);
    if (this.leader) listener(true);
  }

  state(): BusState {
    let lag: number | null = null;
    for (const v of this.lagByPartition.values()) lag = (lag ?? 0) + (Number.isFinite(v) ? Math.max(0, v) : 0);
    return { kind: 'kafka', connected: this.producerUp && this.consumerUp, brokers: this.opts.brokers, lag };
  }

  async disconnect(): Promise<void> {
    await this.consumer.disconnect().catch(() => {});
    await this.producer.disconnect().catch(() => {});
    this.setLeader(false);
  }
}
