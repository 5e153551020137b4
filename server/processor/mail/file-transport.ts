/**
 * The `file` mail transport: each mail becomes a complete RFC 5322 message (`.eml`, what SMTP would have carried)
 * in an outbox directory, written atomically. One file per event id: a redelivered event finds its file and
 * writes no second one.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { writeFileAtomic } from '../../storage/atomic.js';
import { safeEventId } from '../safe-text.js';
import { mimeFields } from './compose.js';
import { MailError, type MailMessage, type MailTransport } from './types.js';

// `2024-05-01T10-20-30.123Z-<safe event id>.eml`: toISOString with ':' replaced (Windows and Samba refuse it).
const OUTBOX_NAME = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-(.+)\.eml$/;

/** The event id an outbox file is about (in its safe form), or null for anything else in the directory. */
export function outboxFileEventId(fileName: string): string | null {
  return OUTBOX_NAME.exec(fileName)?.[1] ?? null;
}

export function createFileTransport(outboxDir: string): MailTransport {
  const dir = path.resolve(outboxDir);
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  // One send at a time, so two deliveries of one event cannot both miss the other's file.
  let queue: Promise<unknown> = Promise.resolve();

  async function existing(safeId: string): Promise<string | undefined> {
    const names = await fs.readdir(dir);
    return names.find((name) => outboxFileEventId(name) === safeId);
  }

  async function write(message: MailMessage): Promise<{ id: string }> {
    const safeId = safeEventId(message.eventId);
    try {
      await fs.mkdir(dir, { recursive: true });
      const found = await existing(safeId);
      if (found) return { id: found };
      const now = new Date();
      const info = await composer.sendMail(mimeFields(message, now));
      const fileName = `${now.toISOString().replaceAll(':', '-')}-${safeId}.eml`;
      await writeFileAtomic(path.join(dir, fileName), info.message as Buffer);
      return { id: fileName };
    } catch (err) {
      // A full or read-only disk may recover; retrying is the safe answer.
      throw new MailError(`outbox ${dir}: ${(err as Error).message}`, false);
    }
  }

  return {
    kind: 'file',
    target: dir,
    send(message) {
      const result = queue.then(() => write(message));
      queue = result.catch(() => {});
      return result;
    },
    async close() {
      await queue;
      composer.close();
    },
  };
}
