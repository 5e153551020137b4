/** What the server keeps, where, and for how long: the data directory, the database, results, sightings, the audit log. Part of the settings table (settings.ts); documented in docs/settings.md. */
import { z } from 'zod';
import { boolean, integer, number, quantity, type SettingSpec } from './setting-schemas.js';

export const STORAGE_SETTINGS = {
  dataDir: {
    env: 'DATA_DIR',
    schema: z.string().trim().min(1),
    default: './data',
    doc: 'Where training images (`images/<label>/`), models (`models/`), the results history (`results/`) and the choices made through the API (`settings/runtime.json`: recognizer, detection method, thresholds) are stored.',
  },
  persistenceEnabled: {
    env: 'PERSISTENCE_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Keep training data in `DATA_DIR`; `false` uses a temporary directory removed at exit.',
  },
  persistenceSize: {
    env: 'PERSISTENCE_SIZE',
    schema: quantity,
    default: '1Gi',
    doc: 'Size of the storage volume (deployment value; reported, not enforced by the server).',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    schema: z.union([
      z.literal(''),
      z
        .string()
        .trim()
        .regex(/^postgres(ql)?:\/\//, 'a postgres:// or postgresql:// URL'),
    ]),
    default: '',
    doc: 'PostgreSQL for all shared state: the rows (sightings, review, corrections, results, audit log, people) and the files (photos, features, models, settings, crops; `DATA_DIR` is then a copy in each replica and may start empty): `postgres://user:password@host:5432/lookout`. Move an existing `DATA_DIR` in with `npm run data:to-postgres`. Empty: the embedded database (PGlite) in `DATA_DIR/db` and files in `DATA_DIR`, one process only. Never logged.',
  },
  embeddedDbBuffersMb: {
    env: 'EMBEDDED_DB_BUFFERS_MB',
    schema: integer(1, 4096),
    default: '16',
    doc: "The embedded database's page cache (PostgreSQL's `shared_buffers`) in MB, held for as long as the server runs; reads past it come from the files, which the OS caches. PostgreSQL's own default, 128, made the idle server about 150 MB larger. Not used with `DATABASE_URL`.",
  },
  resultsMax: {
    env: 'RESULTS_MAX',
    schema: integer(1, 100_000),
    default: '1000',
    doc: 'Results history (`/api/results`): records kept in the database, oldest dropped first; a re-sent record id is recognised among the last 2 x RESULTS_MAX received.',
  },
  sightingsEnabled: {
    env: 'SIGHTINGS_ENABLED',
    schema: boolean,
    default: 'true',
    doc: 'Keep a sighting (a small JPEG face crop, the time, the source and the decision) of the faces recognitions find, for the Faces page; `false` keeps none.',
  },
  sightingsSources: {
    env: 'SIGHTINGS_SOURCES',
    schema: z
      .string()
      .trim()
      .transform((v) =>
        v
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
      )
      .pipe(z.array(z.enum(['api', 'page', 'camera', 'browser', 'verify']))),
    default: 'api,page,camera,browser,verify',
    doc: 'Which recognitions keep sightings, comma separated: `api` (POST /api/recognize by an API client), `page` (a photo on a page, on the server), `camera` (live frames on the server), `browser` (results recognised in a browser and synced), `verify` (POST /api/verify: the second factor).',
  },
  sightingsRetentionDays: {
    env: 'SIGHTINGS_RETENTION_DAYS',
    schema: number(0.001, 3650),
    default: '30',
    doc: 'Sightings older than this many days are removed (crops too) by a purge that runs every hour and at start.',
  },
  sightingsMax: {
    env: 'SIGHTINGS_MAX',
    schema: integer(1, 10_000_000),
    default: '100000',
    doc: 'At most this many sightings are kept; the oldest go first.',
  },
  sightingsIntervalS: {
    env: 'SIGHTINGS_INTERVAL_S',
    schema: number(0, 86_400),
    default: '10',
    doc: "A face tracked across a camera's frames keeps one sighting per this many seconds (0: every frame).",
  },
  auditRetentionDays: {
    env: 'AUDIT_RETENTION_DAYS',
    schema: integer(1, 36_500),
    default: '365',
    doc: 'Audit log entries (biometric operations: enroll, delete, train, verify, template download, sighting access) older than this many days are purged.',
  },
} as const satisfies Record<string, SettingSpec>;
