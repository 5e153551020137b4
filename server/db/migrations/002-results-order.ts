/**
 * Results on the database (server/storage/result-store.ts): the ids of dropped records are remembered up to
 * RESULTS_MAX of them, the oldest forgotten first, which needs their order (a timestamp ties within one drop);
 * a person's deletion finds the results naming them through their labels.
 */
import type { Migration } from './index.js';

export const resultsOrder: Migration = {
  version: 2,
  name: 'results-order',
  sql: `
ALTER TABLE results_forgotten ADD COLUMN seq bigserial;
CREATE INDEX results_forgotten_seq ON results_forgotten (seq);
CREATE INDEX results_labels ON results USING gin (labels);
CREATE INDEX deleted_people_label ON deleted_people (label, deleted_at DESC);
`,
};
