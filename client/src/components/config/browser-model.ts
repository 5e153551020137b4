/** The figures the Models page shows for the model browsers download (BrowserModelSize.tsx). */
import type { CompactModelManifest, TrainedModelsResponse } from '../../../../shared/api/index';

export interface BrowserModelFigures {
  people: number;
  /** Installed (uncompressed segments) and on the wire (gzip), per recognizer; null when it is not trained. */
  lbph: { installed: number; wire: number | null; file: number | null } | null;
  embedding: { installed: number; wire: number | null; file: number | null } | null;
}

/** The figures of a manifest and the list of files. */
export function browserModelFigures(manifest: CompactModelManifest, index: TrainedModelsResponse | null): BrowserModelFigures {
  const of = (m: CompactModelManifest['lbph'] | CompactModelManifest['embedding'], file: number | null | undefined) =>
    m ? { installed: m.people.reduce((n, p) => n + p.bytes, 0), wire: m.wire_bytes ?? null, file: file ?? null } : null;
  return {
    people: manifest.labels.length,
    lbph: of(manifest.lbph, index?.lbph.bytes),
    embedding: of(manifest.embedding, index?.embedding.bytes),
  };
}

/** Bytes in words: 1.2 MB, 340 KB. */
export function formatBytes(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)} MB`;
  if (n >= 1e3) return `${Math.round(n / 1e3)} KB`;
  return `${n} bytes`;
}

export function line(name: string, f: NonNullable<BrowserModelFigures['lbph']>): string {
  const wire = f.wire !== null ? `${formatBytes(f.wire)} to download, ` : '';
  const file = f.file !== null ? ` (the full file would be ${formatBytes(f.file)})` : '';
  return `${name}: ${wire}${formatBytes(f.installed)} installed${file}.`;
}
