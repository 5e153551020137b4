/**
 * `npm run processor`: the event processor, a second process of the same codebase. It polls the Lookout API for
 * new labels (and a remote model server for its status), publishes events to Kafka (or an in-process queue on
 * disk when KAFKA_BROKERS is empty), consumes them and mails the right team. Health on PROCESSOR_PORT.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import { loadProcessorSettings, type ProcessorSettings, SettingsError } from '../config/settings.js';
import { createLogger } from '../logger.js';
import { createProcessor } from './processor.js';

/** Exit code of the fault-injection hook (PROCESSOR_EXIT_AFTER_MAILS): EX_SOFTWARE, told apart from a crash. */
const INJECTED_EXIT = 70;

const appDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), import.meta.url.endsWith('.ts') ? '../..' : '../../..');

function settingsOrExit(): ProcessorSettings {
  try {
    return loadProcessorSettings(process.env, appDir);
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`${err.message}\nThe processor was not started.\n`);
      process.exit(2);
    }
    throw err;
  }
}

const settings = settingsOrExit();
const log = createLogger(settings.logLevel, undefined, settings.logFormat);
const version = (JSON.parse(fs.readFileSync(path.join(appDir, 'package.json'), 'utf8')) as { version: string }).version;

try {
  const exitAfter = settings.processorExitAfterMails;
  const processor = await createProcessor(settings, log, {
    version,
    onMailed: exitAfter
      ? (count) => {
          if (count >= exitAfter) {
            log.warn(`PROCESSOR_EXIT_AFTER_MAILS=${exitAfter}: exiting after mail ${count}, before its offset is committed`);
            process.exit(INJECTED_EXIT);
          }
        }
      : undefined,
  });
  const server = serve({ fetch: processor.app.fetch, port: settings.processorPort, hostname: settings.host }, (info) => {
    log.info(`Lookout processor ${version}: health on http://${settings.host}:${info.port} (state: ${settings.processorStateDir})`);
  });
  server.on('error', (err: NodeJS.ErrnoException) => {
    log.error(`cannot listen on ${settings.host}:${settings.processorPort}: ${err.code ?? err.message}`);
    process.exit(1);
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`${signal}: shutting down (leaving the consumer group)`);
    server.close();
    void processor.close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  await processor.start();
} catch (err) {
  log.error(`start-up failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
