/** Picks the mail transport the settings name (`MAIL_TRANSPORT`). */
import path from 'node:path';
import type { ProcessorSettings } from '../../config/settings.js';
import { createFileTransport } from './file-transport.js';
import { createMailpitTransport } from './mailpit-transport.js';
import { createSmtpTransport, type SmtpTransportOptions } from './smtp-transport.js';
import type { MailTransport } from './types.js';

export type MailTransportSettings = Pick<ProcessorSettings, 'mailTransport' | 'mailUrl' | 'mailSmtpUrl' | 'mailTimeoutMs' | 'dataDir'>;

export function createMailTransport(settings: MailTransportSettings, smtp: SmtpTransportOptions = {}): MailTransport {
  switch (settings.mailTransport) {
    case 'file':
      return createFileTransport(path.join(settings.dataDir, 'outbox'));
    case 'mailpit':
      if (!settings.mailUrl) throw new Error('MAIL_TRANSPORT=mailpit needs MAIL_URL (the base URL of Mailpit)');
      return createMailpitTransport(settings.mailUrl, settings.mailTimeoutMs);
    case 'smtp':
      if (!settings.mailSmtpUrl) throw new Error('MAIL_TRANSPORT=smtp needs MAIL_SMTP_URL (smtp://user:pass@host:587 or smtps://...)');
      return createSmtpTransport(settings.mailSmtpUrl, settings.mailTimeoutMs, smtp);
    default:
      throw new Error(`unknown MAIL_TRANSPORT ${JSON.stringify(settings.mailTransport satisfies never)}`);
  }
}

export * from './compose.js';
export { createFileTransport } from './file-transport.js';
export { createMailpitTransport } from './mailpit-transport.js';
export { createSmtpTransport, isPermanentSmtpError, type SmtpTransportOptions } from './smtp-transport.js';
export * from './types.js';
