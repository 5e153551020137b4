import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROCESSOR_SETTINGS, SETTINGS } from './settings.js';

// The README is the user's manual: every setting the server or the processor reads must be listed there with its default.
describe('README settings table', () => {
  const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
  it.each([...Object.values(SETTINGS), ...Object.values(PROCESSOR_SETTINGS)].map((s) => [s.env, s]))(
    'lists %s with its default',
    (env, spec) => {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${env}\` |`));
      expect(row, `README has no row for ${env}`).toBeDefined();
      expect(row).toContain(spec.default === '' ? '(empty)' : `\`${spec.default}\``);
    },
  );
});
