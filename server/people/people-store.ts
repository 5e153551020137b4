/**
 * People and their training images' metadata, in the database (tables `people` and `image_meta`,
 * server/db/migrations/001-initial.ts): the name as typed ("Marie Curie") beside the stable label (marie-curie),
 * and per stored image the file name it was uploaded as, where it came from and its photo check. The images
 * themselves stay files (server/storage/image-store.ts); a metadata row whose file is gone is ignored by readers.
 */
import type { PhotoCheck } from '../../shared/recognition/photo-check.js';
import type { Database } from '../db/database.js';

export interface Person {
  label: string;
  display_name: string;
  created_at: Date;
  kiosk: boolean;
}

export interface ImageMetaInput {
  original_name?: string | null;
  /** `upload` (POST /api/images), `sighting` (assigned on the Faces page), ... */
  source: string;
  sighting_id?: string | null;
  photo_check?: PhotoCheck | null;
}

export interface ImageMeta {
  label: string;
  filename: string;
  original_name: string | null;
  uploaded_at: Date;
  source: string;
  sighting_id: string | null;
  photo_check: PhotoCheck | null;
}

export class PeopleStore {
  constructor(private readonly db: Database) {}

  /** Creates the person or renames them (the display name as typed). */
  async upsert(label: string, displayName: string): Promise<void> {
    await this.db.query(
      `INSERT INTO people (label, display_name) VALUES ($1, $2)
       ON CONFLICT (label) DO UPDATE SET display_name = EXCLUDED.display_name`,
      [label, displayName],
    );
  }

  /** Creates the person with this display name unless they exist (their name is kept). */
  async ensure(label: string, displayName: string): Promise<void> {
    await this.db.query('INSERT INTO people (label, display_name) VALUES ($1, $2) ON CONFLICT (label) DO NOTHING', [label, displayName]);
  }

  async get(label: string): Promise<Person | null> {
    const rows = await this.db.query<Person>('SELECT label, display_name, created_at, kiosk FROM people WHERE label = $1', [label]);
    return rows[0] ?? null;
  }

  /** Every person's display name by label. */
  async displayNames(): Promise<Map<string, string>> {
    const rows = await this.db.query<{ label: string; display_name: string }>('SELECT label, display_name FROM people');
    return new Map(rows.map((r) => [r.label, r.display_name]));
  }

  /** Removes the person's row (not their images' metadata: forgetPerson does both). Whether there was one. */
  async remove(label: string): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM people WHERE label = $1 RETURNING label', [label]);
    return rows.length > 0;
  }

  /**
   * Records an image's metadata. `keep`: an existing row stays as it is (a capture sent again is the same upload,
   * so the first answer's record stands).
   */
  async setImageMeta(label: string, filename: string, meta: ImageMetaInput, options: { keep?: boolean } = {}): Promise<void> {
    const params = [
      label,
      filename,
      meta.original_name ?? null,
      meta.source,
      meta.sighting_id ?? null,
      meta.photo_check ? JSON.stringify(meta.photo_check) : null,
    ];
    await this.db.query(
      `INSERT INTO image_meta (label, filename, original_name, source, sighting_id, photo_check)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       ON CONFLICT (label, filename) DO ${
         options.keep
           ? 'NOTHING'
           : `UPDATE SET original_name = EXCLUDED.original_name, source = EXCLUDED.source,
              sighting_id = EXCLUDED.sighting_id, photo_check = EXCLUDED.photo_check, uploaded_at = now()`
       }`,
      params,
    );
  }

  /** One label's image metadata by file name. */
  async imageMeta(label: string): Promise<Map<string, ImageMeta>> {
    const rows = await this.db.query<ImageMeta>(
      `SELECT label, filename, original_name, uploaded_at, source, sighting_id, photo_check
       FROM image_meta WHERE label = $1`,
      [label],
    );
    return new Map(rows.map((r) => [r.filename, r]));
  }

  /** Every image's check verdict (null: stored without a check), by label then file name: the summaries. */
  async verdicts(): Promise<Map<string, Map<string, string | null>>> {
    const rows = await this.db.query<{ label: string; filename: string; verdict: string | null }>(
      `SELECT label, filename, photo_check->>'verdict' AS verdict FROM image_meta`,
    );
    const out = new Map<string, Map<string, string | null>>();
    for (const r of rows) {
      const files = out.get(r.label) ?? new Map<string, string | null>();
      files.set(r.filename, r.verdict);
      out.set(r.label, files);
    }
    return out;
  }

  /** Removes one image's metadata. */
  async removeImageMeta(label: string, filename: string): Promise<void> {
    await this.db.query('DELETE FROM image_meta WHERE label = $1 AND filename = $2', [label, filename]);
  }

  /**
   * Everything kept about a person here (their row and their images' metadata), in one transaction; the number of
   * rows removed (the deletion's `removed` counts, server/deletion/forget-person.ts).
   */
  async forgetPerson(label: string): Promise<number> {
    return this.db.transaction(async (tx) => {
      const meta = await tx.query('DELETE FROM image_meta WHERE label = $1 RETURNING filename', [label]);
      const people = await tx.query('DELETE FROM people WHERE label = $1 RETURNING label', [label]);
      return meta.length + people.length;
    });
  }
}
