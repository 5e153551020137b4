/**
 * A small JSON document on disk, rewritten atomically (temp file + rename) on each change; changes are applied
 * one at a time, so two concurrent updates never lose one another.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../../storage/atomic.js';

export class JsonState<T> {
  private value: T | null = null;
  private existed = false;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly initial: () => T,
  ) {}

  /** Reads the file (a missing one gives the initial value); a corrupt one is an error, never silently reset. */
  async load(): Promise<T> {
    try {
      this.value = JSON.parse(await fs.readFile(this.file, 'utf8')) as T;
      this.existed = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read ${this.file}: ${(err as Error).message}`);
      this.value = this.initial();
      this.existed = false;
    }
    return this.value;
  }

  /** Whether the file was there when loaded (false on a first start). */
  get wasOnDisk(): boolean {
    return this.existed;
  }

  get current(): T {
    if (this.value === null) throw new Error(`${this.file} is not loaded`);
    return this.value;
  }

  /** Applies `change` to a copy and writes it; the in-memory value changes only once the file is written. */
  update(change: (draft: T) => void): Promise<T> {
    const run = this.chain.then(async () => {
      const draft = structuredClone(this.current);
      change(draft);
      await fs.mkdir(path.dirname(this.file), { recursive: true });
      await writeFileAtomic(this.file, `${JSON.stringify(draft, null, 1)}\n`);
      this.value = draft;
      this.existed = true;
      return draft;
    });
    this.chain = run.catch(() => {});
    return run;
  }
}
