/**
 * The Safety page's history of PPE checks and what its charts show of it. Pure (no Solid, no DOM, no Chart.js):
 * the page keeps the checks oldest first, appends each new result as it arrives, and merges the server's
 * history (`GET /api/ppe/events`, newest first) every few seconds; the charts are drawn from `chartSeries`.
 */
import type { PpeDetectResponse, PpeHistoryRecord } from '../../../shared/api/index';
import type { PpePerson, PpeStatus } from '../../../shared/events/ppe-events';

/** How many checks the page asks for and keeps. */
export const HISTORY_LIMIT = 200;
/** The compliance line's moving average: over this many last checks that had someone in view. */
export const AVERAGE_WINDOW = 10;

/** What the page keeps of a check: a detect response and a history record both give it. */
export interface PpeCheck {
  id: string;
  /** Milliseconds since the epoch. */
  time: number;
  status: PpeStatus;
  personCount: number;
  missing: string[];
  persons: PpePerson[];
}

function toCheck(r: PpeDetectResponse | PpeHistoryRecord): PpeCheck {
  return {
    id: r.id,
    time: Date.parse(r.timestamp),
    status: r.ppe_status,
    personCount: r.person_count,
    missing: r.missing_ppe,
    persons: r.persons,
  };
}

export const checkFromResponse = (r: PpeDetectResponse): PpeCheck => toCheck(r);
export const checkFromRecord = (r: PpeHistoryRecord): PpeCheck => toCheck(r);

/**
 * The union of two lists of checks (a check is known by its id; `incoming` wins), oldest first, at most
 * `limit` (the newest are kept). A check sent while the server's history was being read is in one list only.
 */
export function mergeChecks(current: readonly PpeCheck[], incoming: readonly PpeCheck[], limit = HISTORY_LIMIT): PpeCheck[] {
  const byId = new Map<string, PpeCheck>();
  for (const c of current) byId.set(c.id, c);
  for (const c of incoming) byId.set(c.id, c);
  const all = [...byId.values()].sort((a, b) => a.time - b.time || a.id.localeCompare(b.id));
  return all.length > limit ? all.slice(all.length - limit) : all;
}

/** Appends one check (a live result) to a list oldest first; the same check twice is kept once. */
export function appendCheck(current: readonly PpeCheck[], check: PpeCheck, limit = HISTORY_LIMIT): PpeCheck[] {
  if (current.some((c) => c.id === check.id)) return mergeChecks(current, [check], limit);
  const last = current.at(-1);
  if (last && last.time > check.time) return mergeChecks(current, [check], limit);
  const next = [...current, check];
  return next.length > limit ? next.slice(next.length - limit) : next;
}

export interface ChartSeries {
  /** One label per check (its time), oldest first. */
  labels: string[];
  /** Per check: 100 compliant, 0 violation, null nobody in view. */
  compliance: (number | null)[];
  /** Per check: the share of compliant checks (percent) over the last AVERAGE_WINDOW checks with persons; null before the first. */
  average: (number | null)[];
  /** Persons missing each item, over all checks; items in the expected order, then any other. */
  missingItems: string[];
  missingCounts: number[];
  /** Per check: persons wearing everything, and persons missing something. */
  compliantPersons: number[];
  violationPersons: number[];
  total: number;
  /** Checks that had someone in view, and those of them that were compliant. */
  withPersons: number;
  compliant: number;
}

function timeFormat(checks: readonly PpeCheck[]): Intl.DateTimeFormat {
  const first = checks[0]?.time ?? 0;
  const last = checks.at(-1)?.time ?? 0;
  const sameDay = new Date(first).toDateString() === new Date(last).toDateString();
  return new Intl.DateTimeFormat(
    undefined,
    sameDay
      ? { hour: '2-digit', minute: '2-digit', second: '2-digit' }
      : { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' },
  );
}

export function chartSeries(checks: readonly PpeCheck[], expected: readonly string[] = []): ChartSeries {
  const format = timeFormat(checks);
  const compliance = checks.map((c) => (c.status === 'no_persons' ? null : c.status === 'compliant' ? 100 : 0));
  const window: number[] = [];
  const average = compliance.map((v) => {
    if (v !== null) {
      window.push(v);
      if (window.length > AVERAGE_WINDOW) window.shift();
    }
    return window.length === 0 ? null : Math.round((window.reduce((a, b) => a + b, 0) / window.length) * 10) / 10;
  });

  const counts = new Map<string, number>(expected.map((item) => [item, 0]));
  for (const c of checks) {
    // A record written without persons still names what was missing in the frame.
    const missing = c.persons.length > 0 ? c.persons.flatMap((p) => p.missing) : c.missing;
    for (const item of missing) counts.set(item, (counts.get(item) ?? 0) + 1);
  }
  const missingItems = [...counts.keys()];

  const withPersons = checks.filter((c) => c.status !== 'no_persons').length;
  return {
    labels: checks.map((c) => format.format(c.time)),
    compliance,
    average,
    missingItems,
    missingCounts: missingItems.map((item) => counts.get(item) ?? 0),
    compliantPersons: checks.map((c) => c.persons.filter((p) => p.status === 'compliant').length),
    violationPersons: checks.map((c) => c.persons.filter((p) => p.status === 'violation').length),
    total: checks.length,
    withPersons,
    compliant: checks.filter((c) => c.status === 'compliant').length,
  };
}

/** "1 check", "3 checks". */
export function checksText(n: number): string {
  return `${n} ${n === 1 ? 'check' : 'checks'}`;
}

/** "1 person", "2 persons". */
export function personsText(n: number): string {
  return `${n} ${n === 1 ? 'person' : 'persons'}`;
}

/** The banner's words for a check. */
export function bannerText(r: Pick<PpeDetectResponse, 'ppe_status' | 'person_count' | 'persons' | 'missing_ppe'>): string {
  if (r.ppe_status === 'no_persons') return 'Nobody in view';
  if (r.ppe_status === 'compliant')
    return r.person_count === 1
      ? 'Compliant: the person wears all the required PPE'
      : `Compliant: all ${r.person_count} persons wear all the required PPE`;
  const violating = r.persons.filter((p) => p.status === 'violation').length || r.person_count;
  return `Violation: ${violating} of ${personsText(r.person_count)} missing ${listText(r.missing_ppe)}`;
}

/** "hardhat", "hardhat and goggles", "hardhat, safety-vest and goggles". */
export function listText(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? 'required PPE';
  return `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}
