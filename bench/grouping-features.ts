/**
 * The faces of the grouping benchmark (grouping.bench.ts, #36) and their descriptors: every face of the open-set
 * benchmark's built-in set (bench/open-set.bench.ts builtInFaces: one man in 19 photos, 6 people in 2 to 4, people
 * seen once), each clean and in `views` degraded camera views (camera-degrade.ts, the open-set benchmark's seed), described by
 * the product's embedding nets. Every face view is a picture of its own (the screenshot's thumbnails are photos of
 * their own); cannot-links between faces of one picture are tested in server/review/grouping.test.ts.
 *
 * `npx tsx bench/grouping-features.ts` writes test/fixtures/grouping/faceapi-128.json (the regression test's
 * data: faceapi-128 descriptors as int16 in base64, scale 1/32767 per descriptor's largest value).
 */
import '../server/telemetry-off.js';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DescriptorModel } from '../shared/recognition/rules.js';
import { parseHaarCascade } from '../shared/vision/haar-cascade.js';
import { computeViews, VIEW_SEED } from './open-set-features.js';
import { builtInFaces } from './open-set.bench.js';

/** One face view with its identity, picture and descriptors. */
export interface GroupingFace {
  person: string;
  /** Faces of one picture are two people (cannot-link); a distinct picture per view otherwise. */
  picture: string;
  view: number;
  descriptors: Partial<Record<DescriptorModel, Float32Array | null>>;
}

/** Degraded views a face (after its clean one). */
export const GROUPING_VIEWS = 3;
export const FIXTURE = 'test/fixtures/grouping/faceapi-128.json';

export async function groupingFaces(
  repoRoot: string,
  descriptors: readonly DescriptorModel[],
  log?: (line: string) => void,
): Promise<GroupingFace[]> {
  const models = path.join(repoRoot, 'public/models');
  const cascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_frontalface_alt2.xml'), 'utf8'));
  const eyeCascade = parseHaarCascade(readFileSync(path.join(models, 'haarcascade_eye.xml'), 'utf8'));
  // Not the group photos' people (identity-sets.ts PEOPLE): the face-match screenshot's thumbnails are cut from
  // those very photos, so they would be near-copies of faces already here under another name.
  const faces = (await builtInFaces(repoRoot, cascade)).map((f) => ({ ...f, picture: f.source }));
  const set = await computeViews(repoRoot, faces, eyeCascade, { views: GROUPING_VIEWS, seed: VIEW_SEED, descriptors, log });
  for (const [name, why] of Object.entries(set.unavailable)) log?.(`grouping: ${name} unavailable: ${why}`);
  return set.views.map((v) => ({
    person: faces[v.face].person,
    // A degraded view is another picture of the face (another frame); only the group photos' clean faces share one.
    picture: v.view === 0 ? faces[v.face].picture : `${faces[v.face].source} view ${v.view}`,
    view: v.view,
    descriptors: v.descriptors,
  }));
}

/** faceapi-128 descriptors as the fixture keeps them. */
export function encodeFixture(faces: readonly GroupingFace[]): string {
  return `${JSON.stringify({
    about:
      'The grouping benchmark (bench/grouping.bench.ts) as data, by bench/grouping-features.ts; photos: test/fixtures/images (SOURCES.md). ' +
      'Per face view: person, picture (faces of one picture are two people), view (0 clean), and its faceapi-128 descriptor as int16 ' +
      'little-endian in base64 times scale / 32767 (null: the nets found no face).',
    faces: faces.map((f) => {
      const d = f.descriptors['faceapi-128'];
      if (!d) return { person: f.person, picture: f.picture, view: f.view, scale: 0, d: null };
      const scale = d.reduce((m, x) => Math.max(m, Math.abs(x)), 0) || 1;
      const q = Int16Array.from(d, (x) => Math.round((x / scale) * 32767));
      return { person: f.person, picture: f.picture, view: f.view, scale, d: Buffer.from(q.buffer).toString('base64') };
    }),
  })}\n`;
}

export function decodeFixture(text: string): GroupingFace[] {
  const data = JSON.parse(text) as { faces: { person: string; picture: string; view: number; scale: number; d: string | null }[] };
  return data.faces.map((f) => {
    let descriptor: Float32Array | null = null;
    if (f.d) {
      const bytes = Buffer.from(f.d, 'base64');
      const q = new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
      descriptor = Float32Array.from(q, (x) => (x / 32767) * f.scale);
    }
    return { person: f.person, picture: f.picture, view: f.view, descriptors: { 'faceapi-128': descriptor } };
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.cwd();
  const faces = await groupingFaces(root, ['faceapi-128'], (line) => console.log(line));
  writeFileSync(path.join(root, FIXTURE), encodeFixture(faces));
  console.log(`${FIXTURE}: ${faces.length} face views`);
}
