/**
 * The results history's schemas refuse text the database cannot store (U+0000, half of a surrogate pair) with a
 * 400 naming the field, instead of a 500 from PostgreSQL; text with characters outside the BMP is still accepted.
 * Found by the fuzz run (test/fuzz): `GET /api/results?label=%00alice`, a record with a NUL in a label, and
 * `GET /api/audit?actor=%00T`; the other free-text filters that reach the database refuse it the same way.
 */
import { describe, expect, it } from 'vitest';
import { auditQuery } from './audit.js';
import { correctionsQuery } from './corrections.js';
import { resultsPostRequest, resultsQuery } from './results.js';
import { reviewPeopleQuery } from './review.js';
import { sightingsQuery } from './sightings.js';

const base = { id: 'result-0001', kind: 'recognition', captured_at: '2024-05-01T12:00:00.000Z', engine: 'browser' } as const;
const face = (label: string) => ({ x: 1, y: 2, w: 3, h: 4, label, confidence: 50 });

describe('results schemas: text the database can store', () => {
  it.each([
    ['a NUL in a face label', { ...base, faces: [face('a\u0000b')] }, ['results', 0, 'faces', 0, 'label']],
    ['a NUL in the source', { ...base, source: 'kiosk\u0000' }, ['results', 0, 'source']],
    ['a lone high surrogate in the backend', { ...base, backend: 'gl\ud800' }, ['results', 0, 'backend']],
    ['a lone low surrogate in a face label', { ...base, faces: [face('\udc00ada')] }, ['results', 0, 'faces', 0, 'label']],
  ])('refuses %s, naming the field', (_what, record, path) => {
    const parsed = resultsPostRequest.safeParse({ results: [record] });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => i.path)).toContainEqual(path);
  });

  it('accepts text outside the BMP (a surrogate pair) and accents', () => {
    const parsed = resultsPostRequest.safeParse({ results: [{ ...base, source: 'kiosk 🙂', faces: [face('José 𝒜')] }] });
    expect(parsed.success).toBe(true);
  });

  it('refuses a label filter with U+0000, accepts an ordinary one', () => {
    expect(resultsQuery.safeParse({ label: '\u0000alice' }).success).toBe(false);
    expect(resultsQuery.safeParse({ label: 'alice 🙂' }).success).toBe(true);
  });
});

describe('free-text filters that reach the database', () => {
  it.each([
    ['GET /api/audit?actor', auditQuery, 'actor'],
    ['GET /api/corrections?label', correctionsQuery, 'label'],
    ['GET /api/review/people?q', reviewPeopleQuery, 'q'],
    ['GET /api/sightings?label', sightingsQuery, 'label'],
    ['GET /api/sightings?group', sightingsQuery, 'group'],
  ] as const)('%s refuses U+0000 and accepts ordinary text', (_what, schema, field) => {
    expect(schema.safeParse({ [field]: '\u0000T\u0308' }).success).toBe(false);
    expect(schema.safeParse({ [field]: 'grace 🙂' }).success).toBe(true);
  });
});
