/**
 * The processor's Prometheus metrics (GET /metrics on its health port): its counters are read from
 * ProcessorStats and the bus state at each scrape, so nothing in the event path changes for them.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { createRegistry } from '../metrics.js';
import type { BusState } from './bus/types.js';
import type { ProcessorStats } from './stats.js';

/** A counter whose value is read from `value()` at each scrape. */
function statCounter(registry: Registry, name: string, help: string, value: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(value());
    },
  });
}

export function createProcessorRegistry(stats: ProcessorStats, bus: () => BusState): Registry {
  const registry = createRegistry();
  statCounter(registry, 'lookout_processor_events_published_total', 'Events this processor published.', () => stats.published);
  statCounter(registry, 'lookout_processor_events_consumed_total', 'Events this processor consumed.', () => stats.consumed);
  statCounter(registry, 'lookout_processor_events_invalid_total', 'Events consumed that could not be read.', () => stats.invalid);
  statCounter(registry, 'lookout_processor_mails_sent_total', 'Mails accepted by the mail transport.', () => stats.mailsSent);
  statCounter(
    registry,
    'lookout_processor_mail_failures_total',
    'Failed mail attempts (each retry counts).',
    () => stats.mailFailedAttempts,
  );
  statCounter(registry, 'lookout_processor_dead_letters_total', 'Events sent to the dead-letter topic.', () => stats.deadLettered);
  statCounter(
    registry,
    'lookout_processor_duplicates_skipped_total',
    'Events not mailed because they were mailed before.',
    () => stats.duplicatesSkipped,
  );
  new Gauge({
    name: 'lookout_processor_consumer_lag',
    help: 'Events waiting to be consumed (Kafka: offset lag summed over the partitions of this member; absent until known).',
    registers: [registry],
    collect() {
      this.reset();
      const lag = bus().lag;
      if (lag !== null) this.set(lag);
    },
  });
  new Gauge({
    name: 'lookout_processor_broker_connected',
    help: '1 when the broker (Kafka or the in-process queue) is connected, else 0.',
    registers: [registry],
    collect() {
      this.set(bus().connected ? 1 : 0);
    },
  });
  return registry;
}
