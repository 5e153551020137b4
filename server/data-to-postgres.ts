/**
 * `npm run data:to-postgres`: moves DATA_DIR (its photos, features, models, settings and crops, and the rows of its
 * embedded database) into the PostgreSQL at DATABASE_URL, so that replicas can start from it with empty disks (#37).
 * Safe to run again (what is there is skipped) and after an interruption; DATA_DIR is left as it was. Stop every
 * server first. Exit status 0 when everything is in PostgreSQL, 3 when something was left (listed), 2 on bad settings.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSettings, SettingsError } from './config/settings.js';
import { createDatabase, redactUrl } from './db/database.js';
import { createLogger } from './logger.js';
import { moveDataDirToPostgres } from './storage/replication/move-to-postgres.js';

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), import.meta.url.endsWith('.ts') ? '..' : '../..');

async function main(): Promise<number> {
  let settings: ReturnType<typeof loadSettings>;
  try {
    settings = loadSettings(process.env, appDir);
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`${err.message}\nNothing was moved.\n`);
      return 2;
    }
    throw err;
  }
  if (!settings.databaseUrl) {
    process.stderr.write('DATABASE_URL: set it to the PostgreSQL server to move DATA_DIR into. Nothing was moved.\n');
    return 2;
  }
  const log = createLogger('warn');
  const embeddedDir = path.join(settings.dataDir, 'db');
  const target = createDatabase({ url: settings.databaseUrl, embeddedDir, log });
  const source = existsSync(path.join(embeddedDir, 'PG_VERSION')) ? createDatabase({ url: '', embeddedDir, log }) : null;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`moving ${settings.dataDir} into ${redactUrl(settings.databaseUrl)}${source ? ' (files and the embedded database)' : ' (files)'}`);
  try {
    const report = await moveDataDirToPostgres({ dataDir: settings.dataDir, target, source, progress: say });
    const f = report.files;
    say(`files: ${f.moved} moved (${(f.bytes / 1e6).toFixed(1)} MB), ${f.alreadyThere} already there`);
    for (const rel of f.different) say(`  left: ${rel} (PostgreSQL holds other bytes for it: they are kept)`);
    for (const rel of f.removedThere) say(`  left: ${rel} (removed in PostgreSQL since an earlier move: not brought back)`);
    for (const r of report.rows) {
      say(
        r.refused ? `rows: ${r.table}: not moved, ${r.refused}` : `rows: ${r.table}: ${r.copied} copied, ${r.alreadyThere} already there`,
      );
    }
    const left = f.different.length + f.removedThere.length + report.rows.filter((r) => r.refused).length;
    say(left ? `done, ${left} item(s) left as listed above` : 'done: everything is in PostgreSQL');
    return left ? 3 : 0;
  } catch (err) {
    process.stderr.write(
      `the move stopped: ${err instanceof Error ? err.message : String(err)}\nWhat was moved stays moved; run it again to go on.\n`,
    );
    return 1;
  } finally {
    await Promise.all([target.close(), source?.close()]);
  }
}

process.exitCode = await main();
