/** Figures of a soak run: latency percentiles per route, and the server's memory over time. */

/** The p-th percentile (0..100) of a list by nearest rank; NaN for an empty list. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

export interface RssSample {
  /** Seconds since the traffic started. */
  t: number;
  /** Resident set size, MiB. */
  mb: number;
}

/** Least-squares slope of RSS over time, in MiB per minute (0 for fewer than two samples). */
export function slopePerMinute(samples: RssSample[]): number {
  if (samples.length < 2) return 0;
  const n = samples.length;
  const mt = samples.reduce((s, x) => s + x.t, 0) / n;
  const mm = samples.reduce((s, x) => s + x.mb, 0) / n;
  let num = 0;
  let den = 0;
  for (const x of samples) {
    num += (x.t - mt) * (x.mb - mm);
    den += (x.t - mt) ** 2;
  }
  return den === 0 ? 0 : (num / den) * 60;
}

/** The server's resident memory from /proc (Linux), MiB; null when the process is gone. */
export async function readRssMb(pid: number, read: (file: string) => Promise<string>): Promise<number | null> {
  try {
    const status = await read(`/proc/${pid}/status`);
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return kb ? Number(kb[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** A plain-text table with right-aligned numbers. */
export function table(head: string[], rows: (string | number)[][]): string {
  const cells = [head, ...rows.map((r) => r.map((c) => (typeof c === 'number' ? (Number.isNaN(c) ? '-' : formatNumber(c)) : c)))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => String(r[i] ?? '').length)));
  return cells
    .map((r, row) =>
      r
        .map((c, i) => (i === 0 || row === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function formatNumber(v: number): string {
  return Number.isInteger(v) ? String(v) : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
}
