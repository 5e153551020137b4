/**
 * The corrections ("not this person") a kiosk gets with the trained models, so its in-browser engine does not name
 * a corrected stranger again while offline. Only the corrections of people in the kiosk gallery (kiosk-gallery.ts)
 * are given, and only embedding templates of the descriptor model the server runs (the one its embeddings.json is
 * made with); the same role as the model files may download them.
 *
 * What is downloaded gets one version: the gallery's when there is no correction, else a hash of the gallery's
 * version and the corrections' ids, so adding or deleting a correction changes the ETag without a training.
 */
import { createHash } from 'node:crypto';
import { type CorrectionFeature, encodeCorrectionsFile } from '../../shared/recognition/correction-file.js';
import type { Database } from '../db/database.js';
import { featureFrom } from '../review/corrections.js';

/** The corrections a kiosk gets for one gallery version. */
export interface KioskCorrectionSet {
  /** The version of the gallery with these corrections (the index's ETag). */
  version: string;
  /** How many templates (one per correction and recognizer). */
  count: number;
  /** The corrections file (shared/recognition/correction-file.ts). */
  body: Uint8Array;
}

const SELECTION = `FROM corrections WHERE label = ANY($1::text[])
  AND (recognizer = 'lbph' OR (recognizer = 'embedding' AND descriptor_model = $2))`;

export class KioskCorrections {
  private cache: { key: string; set: KioskCorrectionSet } | null = null;

  constructor(
    private readonly db: Database,
    /** The descriptor model the server's embedding recognizer runs (null: none, so no embedding corrections). */
    private readonly descriptorModel: () => string | null,
  ) {}

  /**
   * The corrections of `labels` (the gallery's people) over the gallery version `galleryVersion`, or null when there
   * are none. Each call reads the ids (a small query); the features only when they changed.
   */
  async view(galleryVersion: string, labels: readonly string[]): Promise<KioskCorrectionSet | null> {
    if (labels.length === 0) return null;
    const descriptorModel = this.descriptorModel();
    const ids = await this.db.query<{ id: string }>(`SELECT id ${SELECTION} ORDER BY id`, [labels, descriptorModel]);
    if (ids.length === 0) return null;
    const hash = createHash('sha256').update(`${galleryVersion}\n${descriptorModel ?? ''}`);
    for (const { id } of ids) hash.update(`\n${id}`);
    const version = hash.digest('hex').slice(0, 16);
    if (this.cache?.key === version) return this.cache.set;

    const rows = await this.db.query<{ label: string; recognizer: string; feature: Uint8Array }>(
      `SELECT label, recognizer, feature ${SELECTION} ORDER BY created_at, id`,
      [labels, descriptorModel],
    );
    const lbph: CorrectionFeature[] = [];
    const embedding: CorrectionFeature[] = [];
    for (const row of rows) {
      const feature = featureFrom(new Uint8Array(row.feature));
      if (feature) (row.recognizer === 'embedding' ? embedding : lbph).push({ label: row.label, feature });
    }
    const text = encodeCorrectionsFile({ version, descriptorModel: embedding.length ? descriptorModel : null, lbph, embedding });
    const set: KioskCorrectionSet = { version, count: lbph.length + embedding.length, body: new TextEncoder().encode(text) };
    // A correction added or deleted between the two reads: answered, not kept (the next call reads again).
    if (rows.length === ids.length) this.cache = { key: version, set };
    return set;
  }
}
