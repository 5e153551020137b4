import { describe, expect, it, vi } from 'vitest';
import { thresholdValuesOf } from '../../../shared/api/models';
import { defaultRule } from '../../../shared/recognition/rules';
import { engineRule, RULES_KEY, RuleSync, rulesFromThresholds } from './rule-sync';

/** GET /api/models/thresholds as the server answers it: each recognizer's rule, its defaults and what is overridden. */
function thresholds(lbphMax = 70) {
  const lbph = defaultRule('lbph');
  const embedding = defaultRule('embedding');
  const entry = (r: typeof lbph, overridden: string[]) => ({
    ...thresholdValuesOf(r),
    defaults: { max: r.max, sure_max: r.sureMax, ratio_max: r.ratioMax, verify_max: r.verifyMax },
    overridden,
  });
  return {
    lbph: entry({ ...lbph, max: lbphMax, sureMax: Math.min(lbph.sureMax, lbphMax), verifyMax: Math.min(lbph.verifyMax, lbphMax) }, ['max']),
    embedding: { ...entry(embedding, []), descriptor_model: 'faceapi-128' },
  };
}

function memoryStorage() {
  const items = new Map<string, string>();
  return { getItem: (k: string) => items.get(k) ?? null, setItem: (k: string, v: string) => void items.set(k, v), items };
}

describe('rulesFromThresholds', () => {
  it('reads each recognizer’s rule from the answer', () => {
    const rules = rulesFromThresholds(thresholds(70));
    const d = defaultRule('lbph');
    expect(rules.lbph).toEqual({ ...d, max: 70, sureMax: Math.min(d.sureMax, 70), verifyMax: Math.min(d.verifyMax, 70) });
    expect(rules.embedding).toEqual({ ...defaultRule('embedding'), descriptorModel: 'faceapi-128' });
  });

  it('reads the per-person limit and the quality floors, and an older answer without them as off', () => {
    const body = thresholds();
    expect(rulesFromThresholds(body).embedding).toMatchObject({
      cohortRatio: defaultRule('embedding').cohortRatio,
      quality: defaultRule('embedding').quality,
    });
    const { cohort_ratio: _c, quality: _q, ...older } = body.embedding;
    expect(rulesFromThresholds({ embedding: older }).embedding).toMatchObject({ cohortRatio: null, quality: null });
    // Floors that are not all numbers: not a usable rule, so the default applies.
    expect(rulesFromThresholds({ embedding: { ...body.embedding, quality: { min_face_px: 'small' } } }).embedding).toBeUndefined();
  });

  it('leaves out an entry that is not a usable rule, so that recognizer keeps its default', () => {
    const body = thresholds();
    const rules = rulesFromThresholds({ ...body, embedding: { ...body.embedding, sure_max: 5 } });
    expect(rules.embedding).toBeUndefined();
    expect(rules.lbph).toBeDefined();
    expect(rulesFromThresholds(null)).toEqual({});
    expect(rulesFromThresholds({ lbph: { max: 'far' } })).toEqual({});
  });
});

describe('engineRule', () => {
  it('takes the server’s rule, else the default', () => {
    const rules = rulesFromThresholds(thresholds(60));
    expect(engineRule('lbph', rules).max).toBe(60);
    expect(engineRule('lbph', {})).toEqual(defaultRule('lbph'));
    expect(engineRule('embedding', {}, 'faceres-1024')).toEqual(defaultRule('embedding', 'faceres-1024'));
  });

  it('applies an embedding rule only to the descriptor model it was set for', () => {
    const rules = { embedding: { ...defaultRule('embedding', 'faceapi-128'), max: 0.45, descriptorModel: 'faceapi-128' } };
    expect(engineRule('embedding', rules, 'faceapi-128').max).toBe(0.45);
    expect(engineRule('embedding', rules, undefined).max).toBe(0.45);
    expect(engineRule('embedding', rules, 'faceres-1024')).toEqual(defaultRule('embedding', 'faceres-1024'));
  });
});

describe('RuleSync', () => {
  it('uses the server’s rules, keeps them on the device, and starts from the kept copy without the server', async () => {
    const storage = memoryStorage();
    const fetch = vi.fn(async () => new Response(JSON.stringify(thresholds(60))));
    const online = new RuleSync({ fetch, storage });
    expect(online.rules).toEqual({});
    await online.ensureChecked();
    expect(online.rules.lbph?.max).toBe(60);
    expect(fetch).toHaveBeenCalledWith('/api/models/thresholds', expect.anything());
    expect(storage.items.has(RULES_KEY)).toBe(true);

    const down = vi.fn(async (): Promise<Response> => {
      throw new TypeError('Failed to fetch');
    });
    const offline = new RuleSync({ fetch: down, storage });
    expect(offline.rules.lbph?.max).toBe(60);
    await offline.check();
    expect(offline.rules.lbph?.max).toBe(60);
  });

  it('keeps what it knows when the server refuses, and tells a change', async () => {
    let answer: Response | null = new Response(JSON.stringify(thresholds(80)));
    const fetch = vi.fn(async () => answer ?? new Response('{"error":{}}', { status: 503 }));
    const onRules = vi.fn();
    const sync = new RuleSync({ fetch, onRules });
    await sync.check();
    expect(sync.rules.lbph?.max).toBe(80);
    expect(onRules).toHaveBeenCalledTimes(1);
    answer = null;
    await sync.check();
    expect(sync.rules.lbph?.max).toBe(80);
    expect(onRules).toHaveBeenCalledTimes(1);
  });

  it('asks once for the first answer, however many frames wait for it', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify(thresholds())));
    const sync = new RuleSync({ fetch });
    await Promise.all([sync.ensureChecked(), sync.ensureChecked(), sync.ensureChecked()]);
    await sync.ensureChecked();
    expect(fetch).toHaveBeenCalledTimes(1);
  });
});
