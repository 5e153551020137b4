/**
 * The Faces page's calls, typed from the route table: sightings (GET /api/sightings, crops), the review of unknown
 * faces (groups, known sightings by person, assign, dismiss, undo, recent actions) and "not this person"
 * (POST /api/corrections). Every failure is an ApiFailure with a sentence a person can read (lib/api.ts).
 */
import type { ReviewAction, ReviewGroup, ReviewPeopleResponse, Sighting } from '../../../shared/api/index';
import { call } from './api';

export type { ReviewAction, ReviewGroup, Sighting };
export type KnownPerson = ReviewPeopleResponse['people'][number];

/** A group (all its faces) or some faces. */
export type Target = { sighting_ids: string[] } | { group_id: string };
/** An existing person by label, or a new one by the name typed. */
export type Person = { label: string } | { display_name: string };

export interface TimeRange {
  from?: string;
  to?: string;
}

export const facesApi = {
  /** Unknown faces grouped by likeness, largest first. */
  groups: (since?: string) => call('reviewGroups', { query: since ? { since } : {} }, { cache: 'no-store' }),
  /** Named faces counted by person, in a time range. */
  people: (range: TimeRange) => call('reviewPeople', { query: { ...range } }, { cache: 'no-store' }),
  sightings: (filter: TimeRange & { label?: string; limit?: number; cursor?: string | null }) =>
    call('sightings', { query: { ...filter, cursor: filter.cursor ?? undefined } }, { cache: 'no-store' }),
  cropUrl: (id: string) => `/api/sightings/${encodeURIComponent(id)}/crop`,
  assign: (target: Target, person: Person) => call('reviewAssign', { body: { ...target, ...person } }),
  dismiss: (target: Target) => call('reviewDismiss', { body: target }),
  /** "Different people": the faces are not the same person as the group's others (or as each other, without a group). */
  apart: (sighting_ids: string[], group_id?: string) =>
    call('reviewApart', { body: group_id ? { sighting_ids, group_id } : { sighting_ids } }),
  /** "Not this person": the sighting's face must not be given `label` (default: the name it was given) again. */
  correct: (sighting_id: string, label?: string) => call('createCorrection', { body: label ? { sighting_id, label } : { sighting_id } }),
  undo: (id: string) => call('reviewUndo', { params: { id } }),
  actions: (limit = 10) => call('reviewActions', { query: { limit } }, { cache: 'no-store' }),
};
