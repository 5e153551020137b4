// `npm test`'s unit and API tests: `vitest run`, plus one narrow retry. V8 in Node 22 to 26 sometimes aborts a whole
// test process in its JIT-page bookkeeping ("Check failed: jit_page.has_value()", nodejs/node#64500, open: PGlite's
// WebAssembly churn beside other isolates' WebAssembly triggers it) and vitest reports "Worker exited unexpectedly
// with signal ..." for the file that process was running. Only then, and only when no test failed, are exactly
// those files run once more, and that run decides. A test that fails is never retried.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');
const CRASH = /Worker exited unexpectedly with signal (\w+) during \w+ state while running test file (\S+)/g;

/** Runs vitest with `args`, its output shown as it comes; resolves with the exit code and the JSON report. */
function vitest(args) {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-vitest-')), 'report.json');
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile=${report}`, ...args], {
      stdio: ['inherit', 'pipe', 'pipe'],
    });
    let text = '';
    for (const [from, to] of [
      [child.stdout, process.stdout],
      [child.stderr, process.stderr],
    ]) {
      from.on('data', (chunk) => {
        to.write(chunk);
        text += chunk.toString().replace(ANSI, '');
      });
    }
    child.on('error', reject);
    child.on('close', (code) => {
      let json = null;
      try {
        json = JSON.parse(fs.readFileSync(report, 'utf8'));
      } catch {
        // no report: treated as a failure below
      }
      fs.rmSync(path.dirname(report), { recursive: true, force: true });
      resolve({ code: code ?? 1, text, json });
    });
  });
}

const first = await vitest(process.argv.slice(2));
if (first.code === 0) process.exit(0);
const crashed = [...new Set([...first.text.matchAll(CRASH)].map((m) => m[2]))];
// A crashed file is reported as a failed file with no failed test; any other failed file, or a failed test, stands.
const otherFailures = first.json
  ? first.json.numFailedTests + first.json.testResults.filter((r) => r.status === 'failed' && !crashed.includes(r.name)).length
  : Number.NaN;
if (crashed.length === 0 || otherFailures !== 0) process.exit(first.code);
console.log(
  `\nvitest: no test failed, but the process running ${crashed.length === 1 ? 'this file' : 'these files'} died ` +
    `(a V8 abort, nodejs/node#64500); running ${crashed.length === 1 ? 'it' : 'them'} once more:\n  ${crashed.join('\n  ')}\n`,
);
const again = await vitest(crashed);
process.exit(again.code);
