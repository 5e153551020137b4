/**
 * The Faces page's words: when a face was seen ("Seen 10 times, last on 3 May, 14:02"), where, what was done with it,
 * and the time ranges its filter offers. Times with their date, in the viewer's language and clock.
 */
/**
 * The date and the time, in the viewer's language and clock ("3 May, 14:02"; "May 3, 2:02 PM"), the year only when it
 * is not this one. Always with the date: a time alone ("14:02") left the reader guessing which day (#36).
 */
export function timeText(iso: string, now = new Date(), locale?: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(locale, {
    day: 'numeric',
    month: 'short',
    ...(d.getFullYear() === now.getFullYear() ? {} : { year: 'numeric' }),
    hour: '2-digit',
    minute: '2-digit',
  });
}

/** "Seen 10 times, last on 3 May, 14:02"; "Seen once, on 3 May, 14:02". */
export function seenText(count: number, lastSeen: string, now = new Date(), locale?: string): string {
  const at = `on ${timeText(lastSeen, now, locale)}`;
  if (count === 1) return `Seen once, ${at}`;
  return `Seen ${count} times, last ${at}`;
}

/** Plain words: "by a browser and a live page" named the machinery, not what the person did (#36). */
const SOURCE_WORDS: Record<string, string> = {
  api: 'another program',
  page: 'a photo on a Lookout page',
  camera: 'a camera',
  browser: 'a device that recognises faces itself',
  verify: 'a sign-in check',
};

/** Where a face was seen, as a person says it. */
export function sourceText(source: string): string {
  return SOURCE_WORDS[source] ?? source;
}

/** "by another program and a camera". */
export function sourcesText(sources: readonly string[]): string {
  const words = [...new Set(sources)].map(sourceText);
  if (words.length === 0) return '';
  if (words.length === 1) return `by ${words[0]}`;
  return `by ${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

export function facesText(n: number): string {
  return n === 1 ? '1 face' : `${n} faces`;
}

/** A review action in the past tense, for the list of recent actions and the message after an undo. */
export function actionText(a: { kind: string; count: number; name?: string | null }): string {
  const who = a.name || 'someone';
  if (a.kind === 'assign') return `Assigned ${facesText(a.count)} to ${who}`;
  if (a.kind === 'dismiss') return `Dismissed ${facesText(a.count)}`;
  if (a.kind === 'correct') return `Marked ${a.count === 1 ? 'a face' : facesText(a.count)} as not ${who}`;
  if (a.kind === 'apart') return `Split ${facesText(a.count)} off as someone else`;
  return `${a.kind} (${facesText(a.count)})`;
}

export type RangeKey = 'hour' | 'day' | 'week' | 'month' | 'all' | 'custom';

export const RANGES: { key: RangeKey; text: string; ms?: number }[] = [
  { key: 'hour', text: 'Last hour', ms: 3_600_000 },
  { key: 'day', text: 'Last 24 hours', ms: 86_400_000 },
  { key: 'week', text: 'Last 7 days', ms: 7 * 86_400_000 },
  { key: 'month', text: 'Last 30 days', ms: 30 * 86_400_000 },
  { key: 'all', text: 'Everything kept' },
  { key: 'custom', text: 'Between two times…' },
];

/**
 * A range's from/to as ISO times. `custom` takes the values of two datetime-local fields (local time, either may be
 * empty); a field that is not a time is left out.
 */
export function rangeOf(key: RangeKey, now: Date, custom: { from: string; to: string }): { from?: string; to?: string } {
  if (key === 'custom') {
    const iso = (v: string) => {
      const d = v ? new Date(v) : null;
      return d && !Number.isNaN(d.getTime()) ? d.toISOString() : undefined;
    };
    return { from: iso(custom.from), to: iso(custom.to) };
  }
  const ms = RANGES.find((r) => r.key === key)?.ms;
  return ms ? { from: new Date(now.getTime() - ms).toISOString() } : {};
}

/** An assigned face's photo check, as `POST /api/review/assign` answers it (null: not checked). */
export interface AssignedCheck {
  filename: string;
  check: { verdict: string; message: string; detection_note?: string } | null;
}

/**
 * What the photo check said of the faces just assigned, in a sentence: nothing when every checked one is good (or
 * none was checked: an older server), else how many have a problem and what to do (they are kept either way).
 */
export function checksText(checks: readonly AssignedCheck[]): string {
  const checked = checks.filter((c) => c.check);
  const bad = checked.filter((c) => c.check!.verdict !== 'ok').length;
  if (bad === 0) return '';
  const photos = (n: number) => (n === 1 ? '1 photo' : `${n} photos`);
  const has = bad === 1 ? 'has' : 'have';
  const all = bad === 1 ? 'The photo' : bad === 2 ? 'Both photos' : `All ${photos(bad)}`;
  const of = bad === checked.length ? all : `${bad} of ${photos(checked.length)}`;
  return `${of} ${has} a problem (below): ${bad === 1 ? 'it teaches' : 'they teach'} Lookout little. Delete ${bad === 1 ? 'it' : 'them'} on the Training page, or add better photos.`;
}
