/** One figure printed by `npm run bench`: Lookout's median beside a reference measured in the same run. */
export interface BenchRow {
  /** What was measured, e.g. "cascade detectMultiScale, 640x480". */
  name: string;
  /** Unit of `lookout` and `reference`, e.g. "ms" or "req/s". */
  unit: string;
  /** Lookout's figure (a median). */
  lookout: number;
  /** The reference's figure from the same run, when there is one. */
  reference?: number;
  /** What the reference is, e.g. "OpenCV 4.6 C++ (cv2.setNumThreads(1))". */
  referenceName?: string;
  /** Always lookout / reference: for times lower is better, for rates (req/s, fps) higher is better. */
  ratio?: number;
  /** The goal the issue sets, in words, e.g. "ratio <= 2". */
  goal?: string;
}

/** Median of a non-empty list of numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median wall time of `runs` calls of `fn` after `warmup` untimed ones, in milliseconds. */
export async function timeRuns(fn: () => Promise<unknown>, warmup: number, runs: number): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}
