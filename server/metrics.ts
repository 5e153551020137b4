/**
 * Prometheus metrics shared by the processes (API server, event processor, model server): one Registry per
 * process (per app instance, so tests running several in one process stay apart), the default Node metrics in
 * it, and a `GET /metrics` answer in the text exposition format.
 */
import type { Context } from 'hono';
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Request and engine latencies: 5 ms to 30 s. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** A registry with the default Node metrics (`process_*`, `nodejs_*`). */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** `http_request_duration_seconds{method,route,status}`, the route a pattern (never a raw URL). */
export function httpDurationHistogram(registry: Registry): Histogram<'method' | 'route' | 'status'> {
  return new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
}

/** The `GET /metrics` answer. */
export async function metricsResponse(c: Context, registry: Registry): Promise<Response> {
  const text = await registry.metrics();
  return c.body(text, 200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
}
