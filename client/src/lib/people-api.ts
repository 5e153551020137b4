/**
 * #36 2: a person's page's calls, typed from the route table: the page (photos, sightings, name, cover), rename,
 * cover, merge, move photos, undo, and search by face. Every failure is an ApiFailure with a sentence (lib/api.ts).
 */
import type { FaceSearchResponse, PersonActionResponse, PersonPageResponse } from '../../../shared/api/people';
import { call } from './api';

export type { FaceSearchResponse, PersonActionResponse, PersonPageResponse };
export type PersonPhoto = PersonPageResponse['photos'][number];
export type PersonSighting = PersonPageResponse['sightings'][number];
export type FoundSighting = FaceSearchResponse['results'][number];

/** The face a search starts from: a sighting, a stored photo of a person, or an image (a data URL: its largest face). */
export type SearchFace = { sighting_id: string } | { label: string; filename: string } | { image: string };

export const peopleApi = {
  page: (label: string) => call('personPage', { params: { label }, query: { sightings: 100 } }, { cache: 'no-store' }),
  rename: (label: string, display_name: string) => call('renamePerson', { params: { label }, body: { display_name } }),
  cover: (label: string, filename: string | null) => call('setPersonCover', { params: { label }, body: { filename } }),
  merge: (label: string, into: string) => call('mergePerson', { params: { label }, body: { into } }),
  move: (label: string, filenames: string[], to: { label: string } | { display_name: string }) =>
    call('movePhotos', {
      params: { label },
      body: 'label' in to ? { filenames, to: to.label } : { filenames, to: to.display_name, display_name: to.display_name },
    }),
  undo: (id: string) => call('undoPersonAction', { params: { id } }),
  search: (face: SearchFace, limit = 50) => call('searchFaces', { body: { ...face, limit } }),
};

/** The path of a person's page. */
export const personPath = (label: string) => `/people/${encodeURIComponent(label)}`;
