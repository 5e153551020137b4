/**
 * The local history of PPE checks, `DATA_DIR/ppe/history.json`: the last PPE_HISTORY_MAX `ppe_compliance_check`
 * events with their ids (`ppeHistoryRecord`), kept with or without Kafka, for `GET /api/ppe/events` and the
 * Safety page's charts. Bounded, atomic and safe under concurrent checks (see bounded-log.ts).
 */
import path from 'node:path';
import { ppeHistoryRecord, type PpeHistoryRecord } from '../../shared/api/ppe.js';
import type { PpeStatus } from '../../shared/events/ppe-events.js';
import type { Logger } from '../logger.js';
import { BoundedLog } from './bounded-log.js';

export const HISTORY_FILE = 'history.json';

export interface PpeHistoryQuery {
  limit: number;
  status?: PpeStatus;
}

export class PpeHistory {
  private readonly records: BoundedLog<PpeHistoryRecord>;

  constructor(opts: { dir: string; max: number; log: Logger }) {
    this.records = new BoundedLog({
      file: path.join(opts.dir, HISTORY_FILE),
      format: 'lookout-ppe-history',
      max: opts.max,
      record: ppeHistoryRecord,
      log: opts.log,
      what: 'PPE history',
    });
  }

  init(): Promise<void> {
    return this.records.init();
  }

  get size(): number {
    return this.records.size;
  }

  /** Keeps one check; resolves once it is on disk. */
  add(record: PpeHistoryRecord): Promise<void> {
    return this.records.add(ppeHistoryRecord.parse(record));
  }

  /** Newest first, optionally of one status. */
  query(q: PpeHistoryQuery): PpeHistoryRecord[] {
    const out: PpeHistoryRecord[] = [];
    for (const r of this.records.newestFirst()) {
      if (q.status && r.ppe_status !== q.status) continue;
      out.push(r);
      if (out.length >= q.limit) break;
    }
    return out;
  }
}
