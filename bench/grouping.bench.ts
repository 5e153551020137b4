/**
 * `npm run bench grouping` (#36 section 1): how unknown faces are grouped for review (server/review/grouping.ts),
 * beside the grouping before #36 (greedy placement against a group's running mean at the recognition limit).
 *
 * Faces: every face of the open-set benchmark's built-in set (bench/grouping-features.ts: one man in 19 photos,
 * 6 people in 2 to 4, about 70 people seen once), clean and in 3 degraded camera views each, described by the
 * product's nets (faceapi-128, the default descriptor, and faceres-1024; every server groups by faceapi-128's,
 * GROUPING_DESCRIPTOR_MODEL, so faceres-1024's rows are a comparison without a goal). Streams: the clean faces, the degraded
 * views, and both. Figures: pairwise precision (two faces in one group are one person) and recall (two faces of one
 * person are in one group), the number of groups.
 *
 * Out of sample: the people are split in two halves (10 seeded splits); the limits (shares of the recognition limit:
 * complete linkage, average linkage, single linkage) are fitted on one half (the most recall with precision >=
 * FIT_PRECISION on the "all" stream; on a tie the first candidate, i.e. the tightest) and measured on the other, and
 * the other way round; per split the two held-out halves are pooled. Ways fitted: average linkage alone; single
 * linkage bounded by an average and a cap, all three shares fitted (as first reported: the halves without the man
 * seen 19 times cannot tell the bounds apart, and ties go to the tightest, which splits him); and the product's
 * bounds (the average at the recognition limit, set a priori, the cap MAX_SHARE) with only the single-linkage share
 * fitted, beside the average a little tighter, looser and off. Reported: the median over the splits and their
 * range; recall also per person (the mean over people seen more than once of the share of their pairs kept
 * together), since one man's 19 photos hold most pairs. The product's shares (grouping.ts MAX_SHARE, LINK_SHARE,
 * NEAR_SHARE): their figures on every face are printed for the record (in sample: the held-out rows are the ones to
 * expect on other people).
 *
 * GROUPING_FIXTURE=1 uses the committed faceapi-128 descriptors (test/fixtures/grouping) instead of running the nets.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type GroupingOptions, groupingOptions, LINK_SHARE, MAX_SHARE, NEAR_SHARE } from '../server/review/grouping.js';
import { GROUPING_DESCRIPTOR_MODEL } from '../shared/embedding/descriptor-models.js';
import { type DescriptorModel, defaultRule } from '../shared/recognition/rules.js';
import {
  type Algorithm,
  groupStream,
  halves,
  type PairScore,
  pairScore,
  pooled,
  STREAM_WORDS,
  STREAMS,
  type Stream,
  streamOf,
} from './grouping-eval.js';
import { decodeFixture, FIXTURE, type GroupingFace, groupingFaces } from './grouping-features.js';
import type { BenchRow } from './types.js';
import { median } from './types.js';

const SPLITS = Number(process.env.GROUPING_SPLITS ?? 10);
/** The precision a fit aims at on its half: a margin over the 0.95 the issue asks for on the other. */
const FIT_PRECISION = 0.97;
/** A grouping's limits as shares of the recognition limit: complete linkage, average linkage, single linkage. */
interface Shares {
  max: number;
  link?: number;
  near?: number;
}
const sharesText = (x: Shares) =>
  `max ${x.max}${x.link !== undefined ? `, link ${x.link}` : ''}${x.near !== undefined ? `, near ${x.near}` : ''}`;
const grid = (from: number, to: number, step: number) =>
  Array.from({ length: Math.round((to - from) / step) + 1 }, (_, i) => Number((from + i * step).toFixed(3)));
/** The fits searched: average linkage alone, and single linkage bounded by an average. */
const MODES: Record<string, Shares[]> = {
  'average linkage': [1, 1.15, 1.3, 1.5].flatMap((max) => grid(0.75, 1.05, 0.025).map((link) => ({ max, link: Math.min(link, max) }))),
  'single linkage within an average (before)': [1.15, 1.3, 1.5].flatMap((max) =>
    [0.95, 1, 1.05, 1.1].flatMap((link) => grid(0.75, 0.95, 0.025).map((near) => ({ max, link, near }))),
  ),
  // The halves without the man seen 19 times hold no group wide enough to tell one average bound or cap from
  // another (every candidate ties, and a tie goes to the tightest, which splits him): those are the product's, set a
  // priori (the average at the recognition limit itself), and only `near` is fitted. The average bound is also
  // measured a little tighter, looser and off, to show what it does.
  ...Object.fromEntries(
    (
      [
        [LINK_SHARE, ' (shipped)'],
        [0.95, ''],
        [1.05, ''],
        [undefined, ''],
      ] as const
    ).map(([link, shipped]) => [
      `near fitted; ${link === undefined ? 'no average bound' : `average within ${link} of the limit`}, cap ${MAX_SHARE}${shipped}`,
      grid(0.7, 0.95, 0.025).map((near) => ({ max: MAX_SHARE, ...(link === undefined ? {} : { link }), near })),
    ]),
  ),
};

const optionsOf = (limit: number, x: Shares): GroupingOptions => ({
  max: limit * x.max,
  // No average bound: the mean at the cap never binds (every pair within the cap).
  link: limit * (x.link ?? x.max),
  ...(x.near !== undefined ? { near: limit * x.near } : {}),
});

function score(faces: readonly GroupingFace[], model: DescriptorModel, algorithm: Algorithm, options: GroupingOptions): PairScore {
  return pairScore(
    faces.map((f) => f.person),
    groupStream(faces, model, algorithm, options),
  );
}

/** The shares the product ships (server/review/grouping.ts). */
const SHIPPED: Shares = { max: MAX_SHARE, link: LINK_SHARE, near: NEAR_SHARE };

const f3 = (v: number) => v.toFixed(3);
const range = (values: number[]) => `${f3(median(values))} (${f3(Math.min(...values))}-${f3(Math.max(...values))})`;

/** The figures of one descriptor model. */
function benchModel(all: readonly GroupingFace[], model: DescriptorModel, log: (line: string) => void): BenchRow[] {
  const rows: BenchRow[] = [];
  const limit = defaultRule('embedding', model).max;
  const described = all.filter((f) => f.descriptors[model]);
  // The product groups every unknown face on GROUPING_DESCRIPTOR_MODEL's descriptors, whatever model recognises:
  // another model's rows say what grouping on its own descriptors would give (why it is not done), without a goal.
  const used = model === GROUPING_DESCRIPTOR_MODEL;
  const goal = (g: string) => (used ? { goal: g } : {});
  log(
    `\n${model}: ${described.length} of ${all.length} face views described, ${new Set(described.map((f) => f.person)).size} people; recognition limit ${limit}${used ? ' (the descriptor every server groups by)' : ` (for comparison: servers recognising with ${model} group by ${GROUPING_DESCRIPTOR_MODEL}'s descriptors, kept beside their own)`}`,
  );
  log(`| stream | grouping | pairwise precision | pairwise recall | recall per person | groups (people) |`);
  log(`|---|---|---|---|---|---|`);
  for (const stream of STREAMS) {
    // Arrival orders: the old grouping depends on them; the new one should not.
    const before: PairScore[] = [];
    const after: PairScore[] = [];
    for (let seed = 1; seed <= SPLITS; seed++) {
      const faces = streamOf(all, stream, model, seed);
      before.push(score(faces, model, 'mean', { max: limit, link: limit }));
      after.push(score(faces, model, 'linkage', groupingOptions(limit)));
    }
    const people = before[0].people;
    for (const [name, s] of [
      ['before #36: running mean at the limit', before],
      [`now: ${sharesText(SHIPPED)} (the shipped shares; every face, in sample)`, after],
    ] as const) {
      log(
        `| ${stream} (${STREAM_WORDS[stream]}) | ${name} | ${range(s.map((x) => x.precision))} | ${range(s.map((x) => x.recall))} | ${range(s.map((x) => x.personRecall))} | ${range(s.map((x) => x.groups))} (${people}) |`,
      );
    }
    rows.push(
      {
        name: `grouping ${model} ${stream}: pairwise precision before #36 (running mean)`,
        unit: '',
        lookout: median(before.map((x) => x.precision)),
      },
      {
        name: `grouping ${model} ${stream}: pairwise recall before #36 (running mean)`,
        unit: '',
        lookout: median(before.map((x) => x.recall)),
      },
    );
  }
  // Out of sample: fit on one half of the people, measure on the other.
  for (const [mode, candidates] of Object.entries(MODES)) {
    const fitted: Shares[] = [];
    const held: Record<Stream, PairScore[]> = { clean: [], camera: [], all: [] };
    for (let seed = 1; seed <= SPLITS; seed++) {
      const [a, b] = halves(described, 1000 + seed);
      const perStream: Record<Stream, PairScore[]> = { clean: [], camera: [], all: [] };
      for (const [fitOn, testOn] of [
        [a, b],
        [b, a],
      ]) {
        const fitFaces = streamOf(
          described.filter((f) => fitOn.has(f.person)),
          'all',
          model,
          seed,
        );
        let best: { shares: Shares; s: PairScore } | null = null;
        for (const shares of candidates) {
          const s = score(fitFaces, model, 'linkage', optionsOf(limit, shares));
          const ok = s.precision >= FIT_PRECISION;
          const better =
            !best ||
            (ok && (best.s.precision < FIT_PRECISION || s.recall > best.s.recall)) ||
            (!ok && best.s.precision < FIT_PRECISION && s.precision > best.s.precision);
          if (better) best = { shares, s };
        }
        const chosen = (best as { shares: Shares }).shares;
        fitted.push(chosen);
        for (const stream of STREAMS) {
          const faces = streamOf(
            described.filter((f) => testOn.has(f.person)),
            stream,
            model,
            seed,
          );
          perStream[stream].push(score(faces, model, 'linkage', optionsOf(limit, chosen)));
        }
      }
      for (const stream of STREAMS) held[stream].push(pooled(perStream[stream]));
    }
    log(
      `\nOut of sample, ${mode} (${SPLITS} splits of the people in halves, fitted on one half for precision >= ${FIT_PRECISION} on "all", measured on the other; median (range) over the splits):`,
    );
    const near = fitted.flatMap((f) => (f.near !== undefined ? [f.near] : []));
    const link = fitted.flatMap((f) => (f.link !== undefined ? [f.link] : []));
    log(
      `fitted shares of the limit: max ${range(fitted.map((f) => f.max))}${link.length ? `, link ${range(link)}` : ''}${near.length ? `, near ${range(near)}` : ''}`,
    );
    log('| stream | pairwise precision | pairwise recall | recall per person | groups a half (people a half) |');
    log('|---|---|---|---|---|');
    for (const stream of STREAMS) {
      const s = held[stream];
      log(
        `| ${stream} | ${range(s.map((x) => x.precision))} | ${range(s.map((x) => x.recall))} | ${range(s.map((x) => x.personRecall))} | ${range(s.map((x) => x.groups / 2))} (${f3(median(s.map((x) => x.people / 2)))}) |`,
      );
      rows.push(
        {
          name: `grouping ${model} ${stream}, ${mode}: pairwise precision, held out`,
          unit: '',
          lookout: median(s.map((x) => x.precision)),
          ...goal('>= 0.95'),
        },
        {
          name: `grouping ${model} ${stream}, ${mode}: pairwise recall, held out`,
          unit: '',
          lookout: median(s.map((x) => x.recall)),
          ...goal('>= 0.7'),
        },
        {
          name: `grouping ${model} ${stream}, ${mode}: recall per person, held out`,
          unit: '',
          lookout: median(s.map((x) => x.personRecall)),
        },
      );
    }
  }
  return rows;
}

export async function benchGrouping(repoRoot: string): Promise<BenchRow[]> {
  const log = (line: string) => console.log(line);
  log(`Grouping unknown faces (#36) on ${os.cpus().length} x ${os.cpus()[0]?.model ?? 'cpu'}, ${new Date().toISOString().slice(0, 10)}`);
  const fromFixture = process.env.GROUPING_FIXTURE === '1';
  const faces = fromFixture
    ? decodeFixture(readFileSync(path.join(repoRoot, FIXTURE), 'utf8'))
    : await groupingFaces(repoRoot, ['faceapi-128', 'faceres-1024'], log);
  const rows: BenchRow[] = [];
  for (const model of ['faceapi-128', 'faceres-1024'] as const) {
    if (!faces.some((f) => f.descriptors[model])) {
      log(`${model}: no descriptors (${fromFixture ? 'the fixture keeps faceapi-128 only' : 'the nets did not load'})`);
      continue;
    }
    rows.push(...benchModel(faces, model, log));
  }
  return rows;
}
