/**
 * Every schema version, oldest first. A released migration is never edited: a change is a new one (its own file,
 * one line here). Each runs in one transaction; `sql` may hold several statements (no parameters).
 */
import { initial } from './001-initial.js';
import { resultsOrder } from './002-results-order.js';
import { verifyRate } from './003-verify-rate.js';
import { auditAnonymous } from './004-audit-anonymous.js';
import { peoplePages } from './005-people-pages.js';
import { reviewApart } from './006-review-apart.js';
import { sharedFiles } from './007-shared-files.js';
import { groupDescriptor } from './008-group-descriptor.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  initial,
  resultsOrder,
  verifyRate,
  auditAnonymous,
  peoplePages,
  reviewApart,
  sharedFiles,
  groupDescriptor,
];
