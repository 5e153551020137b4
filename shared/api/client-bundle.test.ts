/**
 * The web app's API client must not carry the contract's zod schemas at run time: they are for the server, the
 * OpenAPI document and type checking. Importing them (the index, routes.ts) once put 118 kB of zod into the
 * app's first load. This follows every run-time (non-`import type`) relative import from the app's API module
 * and fails when one reaches zod.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = process.cwd();
const IMPORT = /^\s*(?:import|export)\s+(?!type\b)([^'";]*?)\s*from\s*['"]([^'"]+)['"]/gm;

function resolve(from: string, spec: string): string {
  const base = path.resolve(path.dirname(from), spec.replace(/\.js$/, ''));
  for (const candidate of [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) if (fs.existsSync(candidate)) return candidate;
  throw new Error(`cannot resolve ${spec} from ${from}`);
}

/** `{ type A, type B }`: an import that brings nothing at run time either. */
function typesOnly(names: string): boolean {
  const list = names.trim();
  if (!/^\{[^}]*\}$/.test(list)) return false;
  return list
    .slice(1, -1)
    .split(',')
    .every((n) => !n.trim() || /^\s*type\s/.test(n));
}

/** Every package a file pulls in at run time, following relative imports; `via` says through which files. */
function runtimePackages(entry: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const seen = new Set<string>();
  const visit = (file: string, chain: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = fs.readFileSync(file, 'utf8');
    for (const [, names, spec] of text.matchAll(IMPORT)) {
      if (typesOnly(names)) continue;
      const via = [...chain, path.relative(ROOT, file)];
      if (spec.startsWith('.')) visit(resolve(file, spec), via);
      else if (!found.has(spec)) found.set(spec, via);
    }
  };
  visit(entry, []);
  return found;
}

describe('the web app API client', () => {
  it('reaches no zod schema at run time', () => {
    const packages = runtimePackages(path.join(ROOT, 'client/src/lib/api.ts'));
    expect(packages.get('zod'), `zod imported through ${packages.get('zod')?.join(' -> ')}`).toBeUndefined();
  });

  it('the check sees zod where it is imported (the route table)', () => {
    expect(runtimePackages(path.join(ROOT, 'shared/api/routes.ts')).has('zod')).toBe(true);
  });
});
