import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IDP_SETTINGS } from '../idp/settings.js';
import { PROCESSOR_SETTINGS, SETTINGS } from './settings.js';

// docs/settings.md is the user's list of settings: every setting the server or the processor reads has one row
// there, with its default and the meaning its table in the code gives (the same text ends its error message).
const ROOT = path.resolve(import.meta.dirname, '../..');
const SETTINGS_PAGE = 'docs/settings.md';
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
const DOCUMENTS = [
  'README.md',
  ...fs
    .readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const page = read(SETTINGS_PAGE);
const rowOf = (env: string) => `| \`${env}\` |`;
const TABLES = [...Object.values(SETTINGS), ...Object.values(PROCESSOR_SETTINGS)];

describe('the settings page (docs/settings.md)', () => {
  it.each(TABLES.map((s) => [s.env, s]))('lists %s with its default and meaning', (env, spec) => {
    const row = page.find((line) => line.startsWith(rowOf(env)));
    expect(row, `${SETTINGS_PAGE} has no row for ${env}`).toBeDefined();
    expect(row).toBe(`${rowOf(env)} ${spec.default === '' ? '(empty)' : `\`${spec.default}\``} | ${spec.doc} |`);
  });

  it('documents every setting once, in one row of one page', () => {
    const envs = new Set([...TABLES, ...Object.values(IDP_SETTINGS)].map((s) => s.env));
    const rows = new Map<string, string[]>();
    for (const file of DOCUMENTS) {
      for (const line of read(file)) {
        const env = /^\| `([A-Z][A-Z0-9_]*)` \|/.exec(line)?.[1];
        if (env && envs.has(env)) rows.set(env, [...(rows.get(env) ?? []), file]);
      }
    }
    const twice = [...rows].filter(([, files]) => files.length > 1).map(([env, files]) => `${env} in ${files.join(', ')}`);
    expect(twice).toEqual([]);
    expect([...envs].filter((env) => !rows.has(env))).toEqual([]);
  });

  it('has no row for a setting that nothing reads', () => {
    const known = new Set([...TABLES, ...Object.values(IDP_SETTINGS)].map((s) => s.env));
    const stale = page.flatMap((line) => {
      const env = /^\| `([A-Z][A-Z0-9_]*)` \|/.exec(line)?.[1];
      return env && !known.has(env) ? [env] : [];
    });
    expect(stale).toEqual([]);
  });
});
