/**
 * `npm run idp`: Lookout's identity provider (settings in settings.ts, docs/identity.md), or with
 * arguments one of the administration commands of cli.ts (`npm run idp -- users add ...`).
 *
 * Exit codes: 2 for a bad setting or a refused command, 1 when the port cannot be opened or a command failed.
 */
import { createLogger } from '../logger.js';
import { exitOnSignals } from '../shutdown.js';
import { runCli } from './cli.js';
import { IdpSettingsError, loadIdpSettings } from './settings.js';

let settings: ReturnType<typeof loadIdpSettings>;
try {
  settings = loadIdpSettings();
} catch (err) {
  if (!(err instanceof IdpSettingsError)) throw err;
  process.stderr.write(`${err.message}\nThe identity provider was not started.\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length > 0 && !(args.length === 1 && args[0] === 'serve')) {
  process.exit(await runCli(args, settings.dataDir));
}

const log = createLogger(settings.logLevel, undefined, settings.logFormat);
try {
  // Loaded only to serve: the commands above need no OpenID provider (nor its start-up notices).
  const { startIdp } = await import('./app.js');
  const idp = await startIdp({ settings, log, biometrics: true });
  log.info(`identity provider listening on ${idp.url}, issuer ${idp.issuer}`, { data_dir: settings.dataDir });
  if (settings.serviceClientSecret === undefined)
    log.info(`no service client: set IDP_SERVICE_CLIENT_SECRET to offer ${settings.realm}-service`);
  exitOnSignals(log, () => idp.close());
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    log.error(`cannot listen on ${settings.host}:${settings.port}: ${code}`);
    process.exit(1);
  }
  log.error(`identity provider failed to start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
