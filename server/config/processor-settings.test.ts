import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProcessorSettings, SettingsError } from './settings.js';

const APP_DIR = '/srv/lookout';

/** The SettingsError `env` gives (fails when it loads). */
function refused(env: Record<string, string>): SettingsError {
  try {
    loadProcessorSettings(env, APP_DIR);
  } catch (err) {
    expect(err).toBeInstanceOf(SettingsError);
    return err as SettingsError;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('loadProcessorSettings', () => {
  it('has the documented defaults', () => {
    const s = loadProcessorSettings({}, APP_DIR);
    expect(s.processorPort).toBe(8090);
    expect(s.processorBackendUrl).toBe('http://127.0.0.1:8080');
    expect(s.processorPollIntervalMs).toBe(30_000);
    expect(s.kafkaBrokers).toBe('');
    expect(s.kafkaTopicFace).toBe('cv.face.detections');
    expect(s.kafkaTopicFaceDlq).toBe('dlq.face-notifications');
    expect(s.kafkaGroupId).toBe('lookout-processor');
    expect(s.kafkaClientId).toBe('lookout');
    expect(s.kafkaSsl).toBe(false);
    expect(s.kafkaSaslMechanism).toBe('');
    expect(s.mailTransport).toBe('file');
    expect(s.mailRemoteStatus).toBe('changes');
    expect(s.mailMaxAttempts).toBe(10);
    expect(s.mailRetryBaseMs).toBe(1000);
    expect(s.mailRetryMaxMs).toBe(60_000);
    expect(s.processorAnnounceExisting).toBe(false);
    expect(s.processorExitAfterMails).toBe(0);
    // The common table is read too.
    expect(s.dataDir).toBe(path.resolve('./data'));
  });

  it('keeps its state in <DATA_DIR>/processor, resolved to an absolute path', () => {
    const s = loadProcessorSettings({ DATA_DIR: 'some/relative/data' }, APP_DIR);
    expect(path.isAbsolute(s.processorStateDir)).toBe(true);
    expect(s.processorStateDir).toBe(path.resolve('some/relative/data', 'processor'));
    expect(loadProcessorSettings({ DATA_DIR: '/var/lib/lookout' }, APP_DIR).processorStateDir).toBe('/var/lib/lookout/processor');
    expect(loadProcessorSettings({ DATA_DIR: '/d', PROCESSOR_STATE_DIR: 'shared-state' }, APP_DIR).processorStateDir).toBe(
      path.resolve('shared-state'),
    );
  });

  it('accepts a full Kafka and SMTP configuration', () => {
    const s = loadProcessorSettings(
      {
        KAFKA_BROKERS: 'kafka-1:9092, kafka-2.example.com:9093,[::1]:9094',
        KAFKA_SASL_MECHANISM: 'scram-sha-512',
        KAFKA_USERNAME: 'lookout',
        KAFKA_PASSWORD: 'pw',
        KAFKA_SSL: 'true',
        MAIL_TRANSPORT: 'smtp',
        MAIL_SMTP_URL: 'smtps://user:pass@mail.example.com:465',
      },
      APP_DIR,
    );
    expect(s.kafkaSsl).toBe(true);
    expect(s.kafkaSaslMechanism).toBe('scram-sha-512');
    expect(s.mailSmtpUrl).toBe('smtps://user:pass@mail.example.com:465');
  });

  it.each([
    [{ MAIL_TRANSPORT: 'mailpit' }, 'MAIL_URL', /MAIL_URL: must be set when MAIL_TRANSPORT=mailpit/],
    [{ MAIL_TRANSPORT: 'smtp' }, 'MAIL_SMTP_URL', /MAIL_SMTP_URL: must be set when MAIL_TRANSPORT=smtp/],
    [{ KAFKA_BROKERS: 'kafka-1:9092,kafka-2' }, 'KAFKA_BROKERS', /KAFKA_BROKERS: entry 2 is not host:port/],
    [{ KAFKA_BROKERS: 'kafka-1:port' }, 'KAFKA_BROKERS', /KAFKA_BROKERS: entry 1 is not host:port/],
    [{ KAFKA_BROKERS: 'u:secretpw@kafka-1:9092' }, 'KAFKA_BROKERS', /^(?![\s\S]*secretpw)[\s\S]*KAFKA_BROKERS: entry 1 is not host:port/],
    [{ KAFKA_SASL_MECHANISM: 'plain' }, 'KAFKA_USERNAME', /KAFKA_USERNAME: must be set with KAFKA_SASL_MECHANISM/],
    [{ KAFKA_SASL_MECHANISM: 'scram' }, 'KAFKA_SASL_MECHANISM', /KAFKA_SASL_MECHANISM: .*scram-sha-512/],
    [{ MAIL_TRANSPORT: 'sendmail' }, 'MAIL_TRANSPORT', /MAIL_TRANSPORT: .*"file"\|"mailpit"\|"smtp"/],
    [
      { MAIL_RETRY_BASE_MS: '5000', MAIL_RETRY_MAX_MS: '1000' },
      'MAIL_RETRY_BASE_MS',
      /MAIL_RETRY_BASE_MS: must not be larger than MAIL_RETRY_MAX_MS/,
    ],
    [{ PROCESSOR_PORT: '70000' }, 'PROCESSOR_PORT', /PROCESSOR_PORT: /],
    [{ PROCESSOR_BACKEND_URL: 'ftp://x' }, 'PROCESSOR_BACKEND_URL', /PROCESSOR_BACKEND_URL: /],
  ])('refuses %j naming %s', (env, variable, message) => {
    const err = refused(env);
    expect(
      err.problems.some((p) => p.startsWith(`${variable}:`)),
      err.message,
    ).toBe(true);
    expect(err.message).toMatch(message);
  });

  it('lists every bad variable at once, common ones included', () => {
    const err = refused({ PORT: 'eighty', MAIL_TRANSPORT: 'pigeon', PROCESSOR_POLL_INTERVAL_MS: '1' });
    expect(err.problems.map((p) => p.split(':')[0]).sort()).toEqual(['MAIL_TRANSPORT', 'PORT', 'PROCESSOR_POLL_INTERVAL_MS']);
  });

  it('never puts the Kafka password or the SMTP password in its message', () => {
    const KAFKA_PW = 'kafka-Secret-7731';
    const SMTP_PW = 'secretpw';
    const cases: Record<string, string>[] = [
      { MAIL_TRANSPORT: 'smtp', MAIL_SMTP_URL: `http://u:${SMTP_PW}@x` },
      { MAIL_TRANSPORT: 'smtp', MAIL_SMTP_URL: `smtp://u:${SMTP_PW}@` },
      { MAIL_TRANSPORT: 'smtp', MAIL_SMTP_URL: `smtp://u:${SMTP_PW}@mail.example.com:99999` },
      { MAIL_TRANSPORT: 'smtp', MAIL_SMTP_URL: `u:${SMTP_PW}@mail.example.com` },
      { MAIL_TRANSPORT: 'sendmail', MAIL_SMTP_URL: `smtp://u:${SMTP_PW}@mail.example.com:587` },
      { KAFKA_SASL_MECHANISM: 'scram-sha-512', KAFKA_PASSWORD: KAFKA_PW },
      { KAFKA_SASL_MECHANISM: 'scram', KAFKA_USERNAME: 'lookout', KAFKA_PASSWORD: KAFKA_PW },
      { KAFKA_SASL_MECHANISM: 'plain', KAFKA_USERNAME: 'lookout', KAFKA_PASSWORD: ` ${KAFKA_PW}\n`, KAFKA_BROKERS: 'nope' },
      { KAFKA_PASSWORD: KAFKA_PW, KAFKA_SSL: 'maybe', MAIL_TRANSPORT: 'smtp', MAIL_SMTP_URL: `ftp://${KAFKA_PW}:${SMTP_PW}@x` },
    ];
    for (const env of cases) {
      const err = refused(env);
      expect(err.message, JSON.stringify(env)).not.toContain(SMTP_PW);
      expect(err.message, JSON.stringify(env)).not.toContain(KAFKA_PW);
      expect(err.problems.join('\n'), JSON.stringify(env)).not.toMatch(/secret/i);
    }
  });
});
