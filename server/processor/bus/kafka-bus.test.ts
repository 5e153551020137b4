import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type LogEntry, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../logger.js';
import { type KafkaBusOptions, kafkaClientConfig } from './kafka-bus.js';

const PASSWORD = 's3cr3t-Pa55word';

function options(over: Partial<KafkaBusOptions> = {}): KafkaBusOptions {
  return {
    brokers: ['kafka-1:9092', 'kafka-2:9092'],
    clientId: 'lookout-processor',
    groupId: 'lookout-processor',
    ssl: false,
    sslCaFile: '',
    saslMechanism: '',
    username: '',
    password: '',
    passwordFile: '',
    requestTimeoutMs: 10_000,
    sessionTimeoutMs: 30_000,
    ...over,
  };
}

function recordingLogger(): Logger & { lines: { level: string; message: string }[] } {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => lines.push({ level, message });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

const quiet = recordingLogger();
let dir: string;
let caFile: string;
let passwordFile: string;
const PEM = '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZXhhbXBsZQ==\n-----END CERTIFICATE-----\n';

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lookout-kafka-config-'));
  caFile = path.join(dir, 'ca.pem');
  passwordFile = path.join(dir, 'password');
  await fs.writeFile(caFile, PEM);
  await fs.writeFile(passwordFile, `  from-the-file\n\n`);
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('kafkaClientConfig', () => {
  it('has no TLS and no SASL by default, and passes brokers, client id and timeouts on', () => {
    const config = kafkaClientConfig(options(), quiet);
    expect(config.ssl).toBe(false);
    expect(config.sasl).toBeUndefined();
    expect(config.brokers).toEqual(['kafka-1:9092', 'kafka-2:9092']);
    expect(config.clientId).toBe('lookout-processor');
    expect(config.requestTimeout).toBe(10_000);
    expect(config.connectionTimeout).toBe(5000);
    expect(kafkaClientConfig(options({ requestTimeoutMs: 2000 }), quiet).connectionTimeout).toBe(2000);
  });

  it('uses TLS when KAFKA_SSL is true', () => {
    expect(kafkaClientConfig(options({ ssl: true }), quiet).ssl).toBe(true);
  });

  it("trusts a private CA file's certificate (which implies TLS)", () => {
    expect(kafkaClientConfig(options({ sslCaFile: caFile }), quiet).ssl).toEqual({ ca: [PEM] });
    expect(kafkaClientConfig(options({ ssl: true, sslCaFile: caFile }), quiet).ssl).toEqual({ ca: [PEM] });
  });

  it('fails on a CA file that cannot be read rather than connecting without it', () => {
    expect(() => kafkaClientConfig(options({ sslCaFile: path.join(dir, 'missing.pem') }), quiet)).toThrow(/ENOENT/);
  });

  it.each([
    ['plain', 'plain'],
    ['scram-sha-256', 'scram-sha-256'],
    ['scram-sha-512', 'scram-sha-512'],
  ] as const)('maps SASL mechanism %s to kafkajs %s with the user name and password', (ours, theirs) => {
    const config = kafkaClientConfig(options({ saslMechanism: ours, username: 'lookout', password: PASSWORD }), quiet);
    expect(config.sasl).toEqual({ mechanism: theirs, username: 'lookout', password: PASSWORD });
  });

  it('takes the password from the password file, trimmed, over the password setting', () => {
    const config = kafkaClientConfig(
      options({ saslMechanism: 'scram-sha-512', username: 'lookout', password: PASSWORD, passwordFile }),
      quiet,
    );
    expect(config.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'lookout', password: 'from-the-file' });
  });

  it('reads files through the reader it is given', () => {
    const read: string[] = [];
    const config = kafkaClientConfig(
      options({ saslMechanism: 'plain', username: 'u', passwordFile: '/run/secrets/kafka', sslCaFile: '/etc/ca.pem' }),
      quiet,
      (f) => {
        read.push(f);
        return f === '/etc/ca.pem' ? PEM : `${PASSWORD}\n`;
      },
    );
    expect(read.sort()).toEqual(['/etc/ca.pem', '/run/secrets/kafka']);
    expect(config.ssl).toEqual({ ca: [PEM] });
    expect(config.sasl).toMatchObject({ password: PASSWORD });
  });

  it("sends kafkajs' log entries to our logger by level, with the error and never the password", () => {
    const log = recordingLogger();
    const config = kafkaClientConfig(options({ saslMechanism: 'scram-sha-512', username: 'lookout', password: PASSWORD }), log);
    expect(config.logLevel).toBe(logLevel.WARN);
    const logger = config.logCreator!(logLevel.WARN);
    const entry = (level: logLevel, message: string, extra: Record<string, unknown> = {}): LogEntry => ({
      namespace: 'Connection',
      level,
      label: logLevel[level],
      log: { timestamp: '2025-01-01T00:00:00.000Z', message, ...extra },
    });
    // An entry as kafkajs writes them on a failed authentication, here with the SASL options beside it.
    logger(
      entry(logLevel.ERROR, 'Connection error: SASL SCRAM SHA512 authentication failed', {
        broker: 'kafka-1:9092',
        clientId: 'lookout-processor',
        error: 'SASL SCRAM SHA512 authentication failed: invalid credentials',
        sasl: { mechanism: 'scram-sha-512', username: 'lookout', password: PASSWORD },
        password: PASSWORD,
      }),
    );
    logger(entry(logLevel.WARN, 'Response Metadata timed out', { broker: 'kafka-2:9092' }));
    logger(entry(logLevel.INFO, 'Starting'));
    logger(entry(logLevel.DEBUG, 'Request Metadata', { request: { password: PASSWORD } }));
    expect(log.lines).toEqual([
      {
        level: 'error',
        message:
          'kafka: Connection error: SASL SCRAM SHA512 authentication failed (SASL SCRAM SHA512 authentication failed: invalid credentials)',
      },
      { level: 'warn', message: 'kafka: Response Metadata timed out' },
      { level: 'debug', message: 'kafka: Starting' },
      { level: 'debug', message: 'kafka: Request Metadata' },
    ]);
    for (const line of log.lines) expect(line.message).not.toContain(PASSWORD);
  });
});
