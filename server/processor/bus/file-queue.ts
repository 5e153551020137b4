/**
 * The embedded default broker: an in-process queue kept on disk, one directory per topic under
 * `<state>/queue/`, one file per message (written atomically). A message is "acknowledged" once its file is on
 * disk and "committed" when its file is removed after the handler finished, so a crash or restart loses
 * nothing and redelivers what was not handled: the same at-least-once contract as Kafka, for one processor.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { removeStaleTemps, TEMP_PREFIX, writeFileAtomic } from '../../storage/atomic.js';
import type { Logger } from '../../logger.js';
import type { BusState, EventBus, MessageHandler, OutgoingMessage } from './types.js';

/** Wait after a handler failure before the same message is tried again. */
const RETRY_MS = 1000;

export class FileQueueBus implements EventBus {
  private seq = 0;
  private consumers: { stop: () => void; done: Promise<void> }[] = [];
  private wakers = new Map<string, () => void>();
  private leadershipListeners: ((leader: boolean) => void)[] = [];
  private pending = 0;
  private connected = false;

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {}

  private topicDir(topic: string): string {
    return path.join(this.dir, encodeURIComponent(topic));
  }

  async connect(): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    this.connected = true;
    for (const listener of this.leadershipListeners) listener(true);
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (!this.connected) throw new Error('the in-process queue is closed');
    const dir = this.topicDir(topic);
    await fs.mkdir(dir, { recursive: true });
    for (const message of messages) {
      // Time then a per-process counter: names sort in publish order, also across restarts.
      const name = `${String(Date.now()).padStart(15, '0')}-${String(this.seq++).padStart(9, '0')}.json`;
      await writeFileAtomic(path.join(dir, name), JSON.stringify(message));
    }
    this.wakers.get(topic)?.();
  }

  async consume(topic: string, handler: MessageHandler): Promise<void> {
    const dir = this.topicDir(topic);
    await fs.mkdir(dir, { recursive: true });
    await removeStaleTemps(dir);
    let stopped = false;
    let wake: () => void = () => {};
    const sleep = (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    this.wakers.set(topic, () => wake());
    const loop = async () => {
      while (!stopped) {
        const names = (await fs.readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith(TEMP_PREFIX)).sort();
        this.pending = names.length;
        if (names.length === 0) {
          await sleep(1000);
          continue;
        }
        for (const name of names) {
          if (stopped) break;
          const file = path.join(dir, name);
          let message: OutgoingMessage;
          try {
            message = JSON.parse(await fs.readFile(file, 'utf8')) as OutgoingMessage;
          } catch (err) {
            this.log.error(`in-process queue: ${name} is unreadable (${(err as Error).message}); set aside as .bad`);
            await fs.rename(file, `${file}.bad`).catch(() => {});
            continue;
          }
          try {
            await handler({ ...message, topic, partition: 0, offset: name.slice(0, -5) }, { heartbeat: async () => {} });
          } catch (err) {
            this.log.warn(`in-process queue: handling ${name} failed (${(err as Error).message}); it stays queued`);
            await sleep(RETRY_MS);
            break;
          }
          await fs.rm(file, { force: true });
          this.pending = Math.max(0, this.pending - 1);
        }
      }
    };
    const done = loop().catch((err) => this.log.error(`in-process queue consumer stopped: ${(err as Error).message}`));
    this.consumers.push({
      stop: () => {
        stopped = true;
        wake();
      },
      done,
    });
  }

  onLeadership(listener: (leader: boolean) => void): void {
    this.leadershipListeners.push(listener);
    if (this.connected) listener(true);
  }

  state(): BusState {
    return { kind: 'in-process', connected: this.connected, brokers: [], lag: this.pending };
  }

  async disconnect(): Promise<void> {
    this.connected = false;
    for (const c of this.consumers) c.stop();
    await Promise.all(this.consumers.map((c) => c.done));
    this.consumers = [];
    for (const listener of this.leadershipListeners) listener(false);
  }
}
