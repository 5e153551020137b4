/**
 * The names people typed ("Marie Curie") for the labels Lookout stores (`marie-curie`): labels stay the stable
 * identifiers (API, files, models), pages show the display name. Read from the server's people list
 * (`display_name` and the per-person `enrollment` summary of `GET /api/labels`, kept current by lib/server-status.ts),
 * and handed to lib/face-words.ts so recognition results name people the same way.
 */
import type { LabelSummary } from '../../../shared/api/index';
import { setDisplayNames } from './face-words';
import { serverStatus } from './server-status';

/** The server's summary of a person's stored photos ("1 photo: add 2 more from other angles"). */
export interface EnrollmentSummary {
  photos: number;
  good: number;
  problems?: number;
  unchecked?: number;
  advice: string;
}

/** What `GET /api/labels` tells of a person beyond the label (older servers: nothing). */
export type PersonSummary = Omit<LabelSummary, 'display_name' | 'enrollment'> & {
  display_name?: string | null;
  enrollment?: EnrollmentSummary | null;
};

/** The name to show for a person's summary: their display name, else the label. */
export function shownName(detail: PersonSummary): string {
  const d = detail.display_name?.trim();
  return d ? d : detail.label;
}

/** The display name of `label` as the server last said it (reactive: pages follow a rename), else the label. */
export function displayNameOf(label: string): string {
  const d = (serverStatus.labels()?.details as PersonSummary[] | undefined)?.find((x) => x.label === label);
  return d ? shownName(d) : label;
}

setDisplayNames(displayNameOf);
