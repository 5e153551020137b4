/**
 * A new user's `npm install` looks clean (#36): no "Unknown project config" warning on every npm command (a key in
 * .npmrc that npm does not know), no "install scripts not yet covered by allowScripts" list (every dependency with
 * an install script is decided in package.json's allowScripts; onnxruntime-node's, which would download GPU files
 * from the internet, is denied), and no [PLUGIN_TIMINGS] report from the web app's build (which `prepare` runs).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfigFromFile } from 'vite';
import { describe, expect, it } from 'vitest';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const readJson = (file: string) => JSON.parse(fs.readFileSync(path.join(REPO, file), 'utf8'));

describe('a clean npm install', () => {
  it('npm reads the project config without a warning', async () => {
    const { stderr } = await promisify(execFile)('npm', ['config', 'get', 'registry'], { cwd: REPO });
    expect(stderr).not.toMatch(/warn/i);
  });

  it('every dependency with an install script is allowed or denied in allowScripts; onnxruntime-node is denied', () => {
    const lock = readJson('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([where]) => where.slice(where.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('onnxruntime-node');
    const allowScripts = readJson('package.json').allowScripts ?? {};
    expect(withScripts.filter((name) => typeof allowScripts[name] !== 'boolean')).toEqual([]);
    expect(allowScripts['onnxruntime-node']).toBe(false);
  });

  it("the web app's build prints no plugin timings, for the app nor its workers", async () => {
    const loaded = await loadConfigFromFile({ command: 'build', mode: 'production' }, path.join(REPO, 'vite.config.ts'));
    const config = loaded!.config;
    expect(config.build?.rollupOptions?.checks?.bundlerTimings).toBe(false);
    expect(config.worker?.rollupOptions?.checks?.bundlerTimings).toBe(false);
  });
});
