/**
 * Administration commands of `npm run idp -- <command>`, working on `IDP_DATA_DIR` directly (no running IdP
 * needed; a running one sees user changes at once, and rotated keys at its next start):
 *
 *   users add <name> --temporary-password <pw> [--admin] [--device]   (or --temporary-password-file <file>)
 *   users list
 *   users remove <name>
 *   keys list
 *   keys rotate [--keep <n>]
 *
 * Returns the exit code: 0 done, 2 a usage error or a refused value, 1 anything else. Passwords are never printed.
 */
import { readFile } from 'node:fs/promises';
import { KeyStore } from './keys.js';
import { isEnrolled, UserError, UserStore } from './users.js';

export const USAGE = `Usage: npm run idp [-- serve]
       npm run idp -- users add <name> --temporary-password <password> [--admin] [--device]
       npm run idp -- users add <name> --temporary-password-file <file> [--admin] [--device]
         (--device: role biometric-device, for a kiosk that downloads the trained models)
       npm run idp -- users list
       npm run idp -- users remove <name>
       npm run idp -- keys list
       npm run idp -- keys rotate [--keep <n>]   (n >= 2, default 2; restart the IdP to sign with the new key)`;

class UsageError extends Error {}

interface Io {
  out(line: string): void;
  err(line: string): void;
}

const defaultIo: Io = { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`) };

/** Splits `--flag value` and `--switch` options from positional words. */
function parseArgs(args: string[], valued: string[], switches: string[]): { words: string[]; options: Map<string, string | true> } {
  const words: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      words.push(a);
    } else if (valued.includes(a)) {
      if (i + 1 >= args.length) throw new UsageError(`${a} needs a value`);
      options.set(a, args[++i]);
    } else if (switches.includes(a)) {
      options.set(a, true);
    } else {
      throw new UsageError(`unknown option ${a}`);
    }
  }
  return { words, options };
}

export async function runCli(args: string[], dataDir: string, io: Io = defaultIo): Promise<number> {
  try {
    const [group, command, ...rest] = args;
    if (group === 'users') return await usersCommand(command, rest, new UserStore(dataDir), io);
    if (group === 'keys') return await keysCommand(command, rest, new KeyStore(dataDir), io);
    throw new UsageError(`unknown command ${group ?? ''}`.trim());
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`${err.message}\n${USAGE}`);
      return 2;
    }
    if (err instanceof UserError) {
      io.err(`Refused: ${err.message}`);
      return 2;
    }
    io.err(`Failed: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

async function usersCommand(command: string | undefined, args: string[], users: UserStore, io: Io): Promise<number> {
  switch (command) {
    case 'add': {
      const { words, options } = parseArgs(args, ['--temporary-password', '--temporary-password-file'], ['--admin', '--device']);
      if (words.length !== 1) throw new UsageError('users add takes one name');
      const inline = options.get('--temporary-password');
      const file = options.get('--temporary-password-file');
      if ((inline === undefined) === (file === undefined)) throw new UsageError('give --temporary-password or --temporary-password-file');
      const password = typeof file === 'string' ? (await readFile(file, 'utf8')).replace(/\r?\n$/, '') : String(inline);
      const user = await users.add(words[0], password, { admin: options.has('--admin'), device: options.has('--device') });
      io.out(`Created ${user.username} (${user.roles.join(', ')}); at first sign-in: change the password, enrol the face.`);
      return 0;
    }
    case 'list': {
      if (args.length) throw new UsageError('users list takes no arguments');
      const list = await users.list();
      if (list.length === 0) io.out('No users.');
      for (const u of list) {
        const pending = u.requiredActions.length ? u.requiredActions.join(',') : '-';
        io.out(`${u.username}\troles=${u.roles.join(',')}\tenrolled=${isEnrolled(u)}\trequired=${pending}\tcreated=${u.createdAt}`);
      }
      return 0;
    }
    case 'remove': {
      if (args.length !== 1 || args[0].startsWith('--')) throw new UsageError('users remove takes one name');
      const user = await users.remove(args[0]);
      io.out(`Removed ${user.username}. Their enrolled images stay on the backend (DELETE /api/images/${user.username}).`);
      return 0;
    }
    default:
      throw new UsageError(`unknown users command ${command ?? ''}`.trim());
  }
}

async function keysCommand(command: string | undefined, args: string[], keys: KeyStore, io: Io): Promise<number> {
  switch (command) {
    case 'list': {
      if (args.length) throw new UsageError('keys list takes no arguments');
      const list = await keys.list();
      if (list.length === 0) io.out('No keys yet (they are made at the first start).');
      for (const [i, k] of list.entries()) io.out(`${k.kid}\t${k.alg}\tcreated=${k.created}${i === 0 ? '\t(signing)' : ''}`);
      return 0;
    }
    case 'rotate': {
      const { words, options } = parseArgs(args, ['--keep'], []);
      if (words.length) throw new UsageError('keys rotate takes no names');
      const keep = options.has('--keep') ? Number(options.get('--keep')) : 2;
      if (!Number.isInteger(keep) || keep < 2) throw new UsageError('--keep must be an integer of at least 2');
      const result = await keys.rotate(keep);
      io.out(
        `New signing key ${result.kid}; published: ${result.kept.join(', ')}${result.dropped.length ? `; dropped: ${result.dropped.join(', ')}` : ''}.`,
      );
      io.out('Restart the identity provider to sign with it.');
      return 0;
    }
    default:
      throw new UsageError(`unknown keys command ${command ?? ''}`.trim());
  }
}
