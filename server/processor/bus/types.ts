/**
 * What the processor needs of a message broker: publish with acknowledgement, consume with a commit after the
 * handler finished, and whether this member should poll. Two implementations: Kafka (kafkajs) and an
 * in-process queue kept on disk (the embedded default, one processor).
 */

export interface OutgoingMessage {
  key: string;
  value: string;
  headers: Record<string, string>;
}

export interface IncomingMessage extends OutgoingMessage {
  topic: string;
  partition: number;
  offset: string;
}

export interface HandlerContext {
  /** Tells the broker this member is alive during a long handler (a mail being retried). */
  heartbeat(): Promise<void>;
}

/**
 * Handles one message. When it resolves, the message is committed (never redelivered to the group); when it
 * rejects, it is not, and comes again.
 */
export type MessageHandler = (message: IncomingMessage, ctx: HandlerContext) => Promise<void>;

export interface BusState {
  kind: 'kafka' | 'in-process';
  connected: boolean;
  /** host:port of the bootstrap brokers; empty in-process. */
  brokers: string[];
  /** Messages of the consumed topic not yet handled by the group (as last seen); null when unknown. */
  lag: number | null;
}

export interface EventBus {
  connect(): Promise<void>;
  /** Resolves once the broker acknowledged every message (all in-sync replicas); rejects otherwise. */
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  /** Starts consuming `topic` with `handler`, one message at a time per partition, in order. */
  consume(topic: string, handler: MessageHandler): Promise<void>;
  /**
   * Called with true when this member becomes the one that polls (the group member holding partition 0 of the
   * consumed topic; in-process: always), false when it stops being it.
   */
  onLeadership(listener: (leader: boolean) => void): void;
  state(): BusState;
  disconnect(): Promise<void>;
}
