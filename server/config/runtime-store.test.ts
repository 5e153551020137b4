import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultRule } from '../../shared/recognition/rules.js';
import type { Logger } from '../logger.js';
import { applyThresholdPatch, RUNTIME_DIR, RUNTIME_FILE, RuntimeStore } from './runtime-store.js';

let dataDir: string;
let warnings: string[];
const log: Logger = { debug() {}, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };

function store(descriptor = 'faceapi-128'): RuntimeStore {
  return new RuntimeStore({ dataDir, defaultRule: (r, d) => defaultRule(r, d), descriptorModel: () => descriptor, log });
}

async function started(descriptor?: string): Promise<RuntimeStore> {
  const s = store(descriptor);
  await s.init();
  return s;
}

const file = () => path.join(dataDir, RUNTIME_DIR, RUNTIME_FILE);

beforeEach(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-runtime-'));
  warnings = [];
});
afterEach(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe('RuntimeStore', () => {
  it('starts from the defaults when nothing was saved, and writes nothing', async () => {
    const s = await started();
    expect(s.saved).toEqual({});
    expect(s.ruleFor('lbph')).toEqual(defaultRule('lbph'));
    expect(s.ruleFor('embedding')).toEqual(defaultRule('embedding', 'faceapi-128'));
    expect(s.updatedAt).toBeNull();
    await expect(fs.stat(file())).rejects.toThrow();
  });

  it('keeps the choices and the thresholds for the next start', async () => {
    const a = await started();
    await a.setChoices({ recognition_model: 'embedding' });
    await a.setChoices({ detection_method: 'remote' });
    await a.setThresholds('lbph', { max: 70 });
    await a.setThresholds('embedding', { sure_max: 0.4, ratio_max: 1 });

    const b = await started();
    expect(b.saved).toEqual({ recognition_model: 'embedding', detection_method: 'remote' });
    // The limit lowered under the default sure bound takes it along; never the verification limit (#36).
    expect(b.ruleFor('lbph')).toEqual({ ...defaultRule('lbph'), max: 70, sureMax: 70 });
    expect(b.overridesFor('lbph')).toEqual({ max: 70 });
    expect(b.ruleFor('embedding')).toMatchObject({ sureMax: 0.4, ratioMax: 1, max: defaultRule('embedding').max });
    expect(b.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const saved = JSON.parse(await fs.readFile(file(), 'utf8'));
    expect(saved).toMatchObject({ format: 'lookout-runtime-settings', version: 1, thresholds: { lbph: { max: 70 } } });
  });

  it('resets a key with null and forgets a recognizer with no override left', async () => {
    const s = await started();
    await s.setThresholds('lbph', { max: 70, sure_max: 60 });
    await s.setThresholds('lbph', { max: null });
    expect(s.overridesFor('lbph')).toEqual({ sure_max: 60 });
    expect(s.ruleFor('lbph')).toMatchObject({ max: defaultRule('lbph').max, sureMax: 60 });
    await s.setThresholds('lbph', { sure_max: null });
    expect(s.ruleFor('lbph')).toEqual(defaultRule('lbph'));
    expect(JSON.parse(await fs.readFile(file(), 'utf8')).thresholds).toEqual({});
  });

  it("keeps the embedding recognizer's overrides per descriptor model", async () => {
    const faceapi = await started('faceapi-128');
    await faceapi.setThresholds('embedding', { max: 0.45 });
    const faceres = await started('faceres-1024');
    expect(faceres.ruleFor('embedding')).toEqual(defaultRule('embedding', 'faceres-1024'));
    expect(faceres.overridesFor('embedding')).toEqual({});
    await faceres.setThresholds('embedding', { max: 0.9 });
    const again = await started('faceapi-128');
    expect(again.ruleFor('embedding').max).toBe(0.45);
  });

  it('refuses a rule that cannot work, saying which key and why, and saves nothing', async () => {
    const s = await started();
    const refused = async (
      patch: Parameters<RuntimeStore['setThresholds']>[1],
      message: RegExp,
      recognizer: 'lbph' | 'embedding' = 'lbph',
    ) => {
      const err = await s.setThresholds(recognizer, patch).then(
        () => null,
        (e: unknown) => e as { status: number; message: string },
      );
      expect(err?.status, JSON.stringify(patch)).toBe(400);
      expect(err?.message).toMatch(message);
    };
    await refused({ max: 60, sure_max: 70 }, /sure_max \(70\) must not be above max \(60\)/);
    // #36: verify_max is 1:1's own limit, past `max` if a site wants, never past the calibrated bound.
    await refused({ verify_max: 86 }, /verify_max must be above 4 and at most 85 for lbph/);
    await refused({ ratio_max: 0 }, /ratio_max must be above 0 and at most 1/);
    await refused({ ratio_max: 1.2 }, /ratio_max/);
    await refused({ max: 3 }, /max must be above 4 and at most 85 for lbph/);
    await refused({ max: 2.5 }, /at most 0.55 for embedding \(faceapi-128\)/, 'embedding');
    await refused({ max: -1 }, /max must be above 0/, 'embedding');
    await refused({ max: Number.NaN }, /finite/);
    // A bound saved earlier is not silently moved by a later limit below it.
    await s.setThresholds('lbph', { sure_max: 70 });
    await refused({ max: 60 }, /sure_max \(70\) \(saved earlier; send null to reset it\) must not be above max \(60\)/);
    expect(s.overridesFor('lbph')).toEqual({ sure_max: 70 });
  });

  it('proposes without saving', async () => {
    const s = await started();
    expect(s.propose('lbph', { max: 60 })).toMatchObject({ max: 60, sureMax: 60 });
    expect(s.ruleFor('lbph')).toEqual(defaultRule('lbph'));
    await expect(fs.stat(file())).rejects.toThrow();
    expect(() => s.propose('lbph', { ratio_max: 2 })).toThrow(/ratio_max/);
  });

  it('sets a corrupt file aside with a warning and starts from the defaults', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.writeFile(file(), '{"format": "lookout-runtime-settings", "version": 1, "recognition_model": "lbp');
    const s = await started();
    expect(s.saved).toEqual({});
    expect(s.ruleFor('lbph')).toEqual(defaultRule('lbph'));
    const names = await fs.readdir(path.dirname(file()));
    const aside = names.find((n) => n.startsWith(`${RUNTIME_FILE}.corrupt-`));
    expect(aside).toBeDefined();
    expect(await fs.readFile(path.join(path.dirname(file()), aside!), 'utf8')).toContain('"recognition_model": "lbp');
    expect(warnings.join('\n')).toMatch(/runtime\.json could not be read .*set aside as runtime\.json\.corrupt-/);
    // Saving again works and starts a fresh file.
    await s.setChoices({ recognition_model: 'embedding' });
    expect((await started()).saved).toEqual({ recognition_model: 'embedding' });
  });

  it('sets aside a file of the wrong shape too (a value that is no choice, a threshold that is no number)', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    for (const bad of [
      { format: 'lookout-runtime-settings', version: 1, recognition_model: 'dlib' },
      { format: 'lookout-runtime-settings', version: 1, thresholds: { lbph: { max: '70' } } },
      { format: 'something-else', version: 1 },
      [],
    ]) {
      await fs.writeFile(file(), JSON.stringify(bad));
      const s = await started();
      expect(s.saved, JSON.stringify(bad)).toEqual({});
      expect(s.ruleFor('lbph')).toEqual(defaultRule('lbph'));
      await expect(fs.stat(file())).rejects.toThrow();
    }
    expect((await fs.readdir(path.dirname(file()))).filter((n) => n.includes('.corrupt-')).length).toBeGreaterThanOrEqual(1);
  });

  it('does not follow a symbolic link in place of the file', async () => {
    const elsewhere = path.join(dataDir, 'elsewhere.json');
    await fs.writeFile(elsewhere, JSON.stringify({ format: 'lookout-runtime-settings', version: 1, recognition_model: 'embedding' }));
    await fs.mkdir(path.dirname(file()), { recursive: true });
    await fs.symlink(elsewhere, file());
    const s = await started();
    expect(s.saved).toEqual({});
    expect(await fs.readFile(elsewhere, 'utf8')).toContain('embedding');
  });

  it('answers with the defaults when saved overrides no longer fit them, and says why', async () => {
    await fs.mkdir(path.dirname(file()), { recursive: true });
    // Saved when the default limit was higher: a sure bound above today's limit.
    const limit = defaultRule('lbph').max;
    await fs.writeFile(
      file(),
      JSON.stringify({ format: 'lookout-runtime-settings', version: 1, thresholds: { lbph: { sure_max: limit + 5 } } }),
    );
    const s = await started();
    expect(s.ruleFor('lbph')).toEqual(defaultRule('lbph'));
    expect(s.problemFor('lbph')).toContain(`sure_max (${limit + 5}) must not be above max (${limit})`);
    expect(warnings.some((w) => w.includes('do not fit'))).toBe(true);
  });

  it('follows a change another replica saved, and tells its listeners', async () => {
    const a = await started();
    const b = await started();
    const seen: unknown[] = [];
    b.onChange((now, before) => seen.push({ now, before }));
    await a.setChoices({ recognition_model: 'embedding' });
    await a.setThresholds('lbph', { max: 60 });
    await b.refresh();
    expect(b.saved).toEqual({ recognition_model: 'embedding' });
    expect(b.ruleFor('lbph').max).toBe(60);
    expect(seen).toEqual([{ now: { recognition_model: 'embedding' }, before: {} }]);
  });

  it('loses no change when two replicas save at once', async () => {
    const [a, b] = await Promise.all([started(), started()]);
    const keys = ['max', 'sure_max', 'verify_max'] as const;
    // Each writes other keys (lbph on A, embedding on B) and the choices, interleaved: all of them must land.
    await Promise.all([
      ...keys.map((key, i) => a.setThresholds('lbph', { [key]: 70 - i })),
      ...keys.map((key, i) => b.setThresholds('embedding', { [key]: 0.45 - i * 0.01 })),
      a.setChoices({ recognition_model: 'embedding' }),
      b.setChoices({ detection_method: 'remote' }),
    ]);
    const c = await started();
    expect(c.overridesFor('lbph')).toEqual({ max: 70, sure_max: 69, verify_max: 68 });
    expect(c.overridesFor('embedding')).toEqual({ max: 0.45, sure_max: 0.44, verify_max: 0.43 });
    expect(c.saved).toEqual({ recognition_model: 'embedding', detection_method: 'remote' });
    // No temporary file or lock left behind.
    expect(await fs.readdir(path.dirname(file()))).toEqual([RUNTIME_FILE]);
  });
});

describe('applyThresholdPatch', () => {
  const lbph = defaultRule('lbph');

  it('switches the margin rule off with ratio_max 1 and back to the default with null', () => {
    const emb = defaultRule('embedding');
    const off = applyThresholdPatch('embedding', emb, {}, { ratio_max: 1 });
    expect(off).toMatchObject({ overrides: { ratio_max: 1 }, rule: { ratioMax: 1 } });
    const back = applyThresholdPatch('embedding', emb, { ratio_max: 1 }, { ratio_max: null });
    expect(back).toMatchObject({ overrides: {}, rule: { ratioMax: emb.ratioMax } });
  });

  it('#35: refuses a limit past the calibrated bound of the recognizer and descriptor model, and takes the bound', () => {
    expect(applyThresholdPatch('lbph', lbph, {}, { max: 120 })).toEqual({
      problem: expect.stringMatching(/max must be above 4 and at most 85 for lbph, got 120/),
    });
    expect(applyThresholdPatch('lbph', lbph, {}, { max: 85 })).toMatchObject({
      rule: { max: 85, nearMax: lbph.nearMax, sureMax: lbph.sureMax },
    });
    const faceres = defaultRule('embedding', 'faceres-1024');
    expect(applyThresholdPatch('embedding', faceres, {}, { max: 0.92, verify_max: 0.92 }, 'faceres-1024')).toMatchObject({
      rule: { max: 0.92, verifyMax: 0.92 },
    });
    expect(applyThresholdPatch('embedding', faceres, {}, { verify_max: 0.93 }, 'faceres-1024')).toEqual({
      problem: expect.stringMatching(/verify_max must be above 0 and at most 0.92 for embedding \(faceres-1024\), got 0.93/),
    });
    // A bound saved earlier past it is refused too, naming how to clear it.
    expect(applyThresholdPatch('embedding', defaultRule('embedding'), { max: 2 }, { ratio_max: 1 })).toEqual({
      problem: expect.stringMatching(/got 2 \(saved earlier; send null to reset it\)/),
    });
  });
});
