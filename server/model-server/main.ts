/**
 * `npm run model-server`: the standalone KServe V2 model server (app.ts). Settings from the environment:
 * PORT (9000), HOST (127.0.0.1), MODEL_NAME (face-detection-retail-0005), ALLOWED_HOSTS (localhost and the
 * loopback addresses, HOST added), LOG_LEVEL (info), LOG_FORMAT (text or json). It listens at
 * once and loads the model in the background; until then readiness and inference answer 503, as OVMS does.
 */
import { z } from 'zod';
import { allowedHostsVariable } from '../http/security.js';
import { exitOnSignals } from '../shutdown.js';
import { createLogger } from '../logger.js';
import { DEFAULT_MODEL_NAME, listenModelServer } from './app.js';

const SETTINGS = z.object({
  PORT: z.coerce
    .number({ message: 'PORT: must be a number' })
    .int('PORT: must be an integer')
    .min(0, 'PORT: must be 0 to 65535')
    .max(65535, 'PORT: must be 0 to 65535')
    .default(9000),
  HOST: z.string().trim().min(1, 'HOST: must not be empty').default('127.0.0.1'),
  MODEL_NAME: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9._-]+$/, 'MODEL_NAME: must be a model name of letters, digits, ".", "_" or "-"')
    .default(DEFAULT_MODEL_NAME),
  ALLOWED_HOSTS: allowedHostsVariable,
  LOG_LEVEL: z
    .enum(['debug', 'info', 'warn', 'error', 'silent'], { message: 'LOG_LEVEL: must be debug, info, warn, error or silent' })
    .default('info'),
  LOG_FORMAT: z.enum(['text', 'json'], { message: 'LOG_FORMAT: must be text or json' }).default('text'),
});

// Unset and empty variables both mean "use the default".
const env = Object.fromEntries(Object.keys(SETTINGS.shape).map((k) => [k, process.env[k] === '' ? undefined : process.env[k]]));
const parsed = SETTINGS.safeParse(env);
if (!parsed.success) {
  process.stderr.write(
    `Invalid settings:\n${parsed.error.issues.map((i) => `  - ${i.message}`).join('\n')}\nThe model server was not started.\n`,
  );
  process.exit(2);
}
const settings = parsed.data;
const log = createLogger(settings.LOG_LEVEL, undefined, settings.LOG_FORMAT);

try {
  const running = await listenModelServer({
    port: settings.PORT,
    host: settings.HOST,
    modelName: settings.MODEL_NAME,
    allowedHosts: settings.ALLOWED_HOSTS,
    logger: log,
  });
  log.info(`model server listening on ${running.url}, serving ${settings.MODEL_NAME} (loading)`);
  exitOnSignals(log, () => running.close());
} catch (err) {
  const code = (err as NodeJS.ErrnoException).code;
  log.error(`cannot listen on ${settings.HOST}:${settings.PORT}: ${code ?? (err instanceof Error ? err.message : String(err))}`);
  process.exit(1);
}
