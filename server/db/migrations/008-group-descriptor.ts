/**
 * #36 1: the descriptor unknown faces are grouped by, when it is not the face's own. Grouping is measured and tuned
 * on face-api's 128-d descriptor (bench/RESULTS.md "Grouping unknown faces"): with `faceres-1024` recognising, its
 * 1,024-d descriptors stay in `descriptor` (search by face, corrections, camera tracks), and a 128-d one for
 * grouping is kept here. NULL where `descriptor` is itself 128-d.
 */
import type { Migration } from './index.js';

export const groupDescriptor: Migration = {
  version: 8,
  name: 'group-descriptor',
  sql: `
ALTER TABLE sightings ADD COLUMN group_descriptor bytea;
`,
};
