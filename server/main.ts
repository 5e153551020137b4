/**
 * `npm start`: validates the settings, starts the service and listens. A bad setting stops here with a
 * message naming it. With PERSISTENCE_ENABLED=false, data lives in a temporary directory removed at exit.
 */
// First: before anything can load onnxruntime-node.
import './telemetry-off.js';
import fs from 'node:fs';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { loadSettings, SettingsError, type Settings } from './config/settings.js';
import { createLogger } from './logger.js';
import { createService } from './app.js';
import { answerExpectContinue } from './http/request.js';

/** The repository / install directory: two levels above dist/server/main.js or server/main.ts. */
const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), import.meta.url.endsWith('.ts') ? '..' : '../..');

function settingsOrExit(): Settings {
  try {
    return loadSettings(process.env, appDir);
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`${err.message}\nThe server was not started.\n`);
      process.exit(2);
    }
    throw err;
  }
}

const settings = settingsOrExit();
const log = createLogger(settings.logLevel, undefined, settings.logFormat);

let tempDir: string | null = null;
if (!settings.persistenceEnabled) {
  tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lookout-data-'));
  settings.dataDir = tempDir;
  log.info(`persistence is off: data lives in ${tempDir} until exit`);
}

function removeTemp(): void {
  if (tempDir) fs.rmSync(tempDir, { recursive: true, force: true });
  tempDir = null;
}

try {
  const service = await createService(settings, log);
  const server = serve({ fetch: service.app.fetch, port: settings.port, hostname: settings.host }, (info) => {
    log.info(
      `Lookout ${service.ctx.version} listening on http://${settings.host}:${info.port} (data: ${settings.dataDir}, up to ${service.ctx.workers} vision workers)`,
    );
  });
  // The database opens at its first query, and the dashboard's first list of people waited for it (4 s on an idle
  // 2-core box, 20 s on a loaded one): open it now, in the background. A failure is logged; the next query retries.
  // Not earlier, inside createService: on 2 cores that made ready slower and the first upload no sooner (#38).
  service.ctx.db
    .open()
    .catch((err: unknown) => log.warn(`the database did not open yet: ${err instanceof Error ? err.message : String(err)}`));
  // `Expect: 100-continue` with a body over MAX_BODY_BYTES: the 413 goes out before the client sends the body.
  answerExpectContinue(server as Server, settings.maxBodyBytes);
  server.on('error', (err: NodeJS.ErrnoException) => {
    log.error(`cannot listen on ${settings.host}:${settings.port}: ${err.code ?? err.message}`);
    removeTemp();
    process.exit(1);
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down`);
    server.close();
    void service.close().finally(() => {
      removeTemp();
      process.exit(0);
    });
    // In-flight requests get a few seconds; then exit regardless.
    setTimeout(() => {
      removeTemp();
      process.exit(0);
    }, 5000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('exit', removeTemp);
} catch (err) {
  log.error(`start-up failed: ${err instanceof Error ? err.message : String(err)}`);
  removeTemp();
  process.exit(1);
}
