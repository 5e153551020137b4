/**
 * A real Kafka-protocol broker for tests: librdkafka's mock cluster, started through Debian's `kcat` (consuming
 * a keep-alive topic keeps the process, and so the cluster, running). It speaks the Kafka wire protocol on
 * 127.0.0.1 with consumer groups, offsets and auto-created topics (4 partitions); its data lives in the process.
 * `pause()` freezes it (SIGSTOP: connections stay open, nothing answers) to play a broker that went down.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Kafka, logLevel } from 'kafkajs';

export interface KafkaMock {
  /** `127.0.0.1:PORT,...`, one per broker. */
  bootstrap: string;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

export function kcatAvailable(): boolean {
  return spawnSync('kcat', ['-V'], { stdio: 'ignore' }).status === 0;
}

export async function startKafkaMock(brokers = 3): Promise<KafkaMock> {
  const child: ChildProcess = spawn(
    'kcat',
    ['-C', '-b', 'unused:9092', '-X', `test.mock.num.brokers=${brokers}`, '-d', 'mock', '-t', 'keepalive', '-o', 'end', '-q'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  const bootstrap = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kcat mock cluster did not start: ${err.slice(0, 500)}`)), 15_000);
    child.stderr!.on('data', (d: Buffer) => {
      if (err.length < 100_000) err += d.toString();
      const m = /bootstrap\.servers=(\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kcat exited ${code}: ${err.slice(0, 500)}`));
    });
  });
  // The debug output goes on for ever: keep draining it so the pipe never fills and blocks the broker.
  child.stderr!.removeAllListeners('data');
  child.stderr!.resume();
  return {
    bootstrap,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

export interface TopicRecord {
  partition: number;
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string>;
}

/**
 * Reads a topic from the start with a fresh consumer group: once the group is joined, until `count` records
 * came or none came for `idleMs` (so "exactly one" can be asserted), at most 60 s in all.
 */
export async function readTopic(bootstrap: string, topic: string, count: number, idleMs = 3000): Promise<TopicRecord[]> {
  const kafka = new Kafka({ clientId: 'test-reader', brokers: bootstrap.split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({
    groupId: `test-reader-${Math.random().toString(36).slice(2)}`,
    sessionTimeout: 6000,
    heartbeatInterval: 500,
  });
  const records: TopicRecord[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve) => {
      const overall = setTimeout(resolve, 60_000);
      let idle: NodeJS.Timeout | undefined;
      const quiet = () => {
        clearTimeout(idle);
        idle = setTimeout(finish, idleMs);
      };
      function finish() {
        clearTimeout(overall);
        clearTimeout(idle);
        resolve();
      }
      consumer.on(consumer.events.GROUP_JOIN, quiet);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = String(v);
          records.push({
            partition,
            offset: message.offset,
            key: message.key?.toString() ?? '',
            value: message.value?.toString() ?? '',
            headers,
          });
          if (records.length >= count) finish();
          else quiet();
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return records;
}
