/** PeopleStore on both databases: display names, image metadata, forgetting a person. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPhoto } from '../../shared/recognition/photo-check.js';
import { DATABASES, type TestDatabase } from '../../test/helpers/databases.js';
import { PeopleStore } from './people-store.js';

describe.each(DATABASES)('PeopleStore on %s', (_name, open) => {
  let t: TestDatabase;
  let people: PeopleStore;
  beforeAll(async () => {
    t = await open();
    people = new PeopleStore(t.db);
  });
  afterAll(async () => {
    await t?.dispose();
  });

  it('keeps the display name: ensure does not rename, upsert does', async () => {
    await people.ensure('marie-curie', 'Marie Curie');
    await people.ensure('marie-curie', 'marie curie');
    expect((await people.get('marie-curie'))?.display_name).toBe('Marie Curie');
    await people.upsert('marie-curie', 'Marie Skłodowska-Curie');
    expect(await people.get('marie-curie')).toMatchObject({ label: 'marie-curie', display_name: 'Marie Skłodowska-Curie', kiosk: true });
    expect((await people.get('marie-curie'))?.created_at).toBeInstanceOf(Date);
    expect(await people.displayNames()).toEqual(new Map([['marie-curie', 'Marie Skłodowska-Curie']]));
    expect(await people.get('nobody')).toBeNull();
  });

  it('records image metadata with its check (jsonb round trip); keep leaves the first record', async () => {
    const gray = { width: 4, height: 4, data: new Uint8Array(16) };
    const check = checkPhoto({ gray, faces: [] });
    await people.setImageMeta('marie-curie', 'a.jpg', { original_name: 'IMG 1.jpg', source: 'upload', photo_check: check });
    await people.setImageMeta('marie-curie', 'a.jpg', { original_name: 'other.jpg', source: 'upload' }, { keep: true });
    await people.setImageMeta('marie-curie', 'b.jpg', { source: 'sighting', sighting_id: 's1' });
    const meta = await people.imageMeta('marie-curie');
    expect(meta.get('a.jpg')).toMatchObject({ original_name: 'IMG 1.jpg', source: 'upload', photo_check: check, sighting_id: null });
    expect(meta.get('b.jpg')).toMatchObject({ original_name: null, source: 'sighting', sighting_id: 's1', photo_check: null });
    expect((await people.verdicts()).get('marie-curie')).toEqual(
      new Map([
        ['a.jpg', 'no_face'],
        ['b.jpg', null],
      ]),
    );
    await people.removeImageMeta('marie-curie', 'b.jpg');
    expect([...(await people.imageMeta('marie-curie')).keys()]).toEqual(['a.jpg']);
  });

  it('forgets a person: their row and their images metadata, counted', async () => {
    await people.ensure('other', 'Other');
    await people.setImageMeta('other', 'x.jpg', { source: 'upload' });
    expect(await people.forgetPerson('marie-curie')).toBe(2);
    expect(await people.get('marie-curie')).toBeNull();
    expect((await people.imageMeta('marie-curie')).size).toBe(0);
    expect(await people.forgetPerson('marie-curie')).toBe(0);
    expect((await people.imageMeta('other')).size).toBe(1);
    expect(await people.remove('other')).toBe(true);
    expect(await people.remove('other')).toBe(false);
  });
});
