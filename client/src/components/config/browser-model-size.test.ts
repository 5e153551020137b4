import { describe, expect, it } from 'vitest';
import type { CompactModelManifest } from '../../../../shared/api/index';
import { browserModelFigures, formatBytes } from './browser-model';

const ref = (label: string, bytes: number) => ({ label, hash: '0123456789abcdef', bytes, samples: 3 });

describe('browser model size', () => {
  it('adds up the segments installed, and takes the wire and file sizes as the server gives them', () => {
    const manifest = {
      labels: ['a', 'b'],
      lbph: { people: [ref('a', 20_000), ref('b', 21_000)], wire_bytes: 17_500 },
      embedding: null,
    } as unknown as CompactModelManifest;
    expect(browserModelFigures(manifest, { lbph: { bytes: 700_000 }, embedding: { bytes: null } } as never)).toEqual({
      people: 2,
      lbph: { installed: 41_000, wire: 17_500, file: 700_000 },
      embedding: null,
    });
  });

  it('says bytes in words', () => {
    expect([formatBytes(512), formatBytes(17_500), formatBytes(8_630_000), formatBytes(344_000_000)]).toEqual([
      '512 bytes',
      '18 KB',
      '8.6 MB',
      '344 MB',
    ]);
  });
});
