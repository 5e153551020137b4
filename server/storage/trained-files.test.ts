import { describe, expect, it } from 'vitest';
import { EMPTY_SNAPSHOT, makeSnapshot, modelVersion } from './trained-files.js';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('modelVersion', () => {
  it('is null when nothing is trained', () => {
    expect(modelVersion({ lbph: null, labelMap: null, embedding: null })).toBeNull();
    expect(makeSnapshot({ lbph: null, labelMap: null, embedding: null }, [], [])).toBe(EMPTY_SNAPSHOT);
  });

  it('is 16 hex digits that depend on the content only', () => {
    const a = modelVersion({ lbph: bytes('yaml'), labelMap: bytes('pickle'), embedding: null });
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(modelVersion({ lbph: bytes('yaml'), labelMap: bytes('pickle'), embedding: null })).toBe(a);
    expect(modelVersion({ lbph: bytes('yaml2'), labelMap: bytes('pickle'), embedding: null })).not.toBe(a);
    expect(modelVersion({ lbph: bytes('yaml'), labelMap: bytes('pickle'), embedding: bytes('{}') })).not.toBe(a);
  });

  it('does not confuse bytes moved from one file to the next', () => {
    const a = modelVersion({ lbph: bytes('ab'), labelMap: bytes('c'), embedding: null });
    const b = modelVersion({ lbph: bytes('a'), labelMap: bytes('bc'), embedding: null });
    expect(a).not.toBe(b);
  });
});

describe('makeSnapshot', () => {
  it('sorts and dedups the labels and takes the latest training time', () => {
    const s = makeSnapshot(
      { lbph: bytes('y'), labelMap: null, embedding: bytes('e') },
      ['bob', 'ada', 'bob'],
      ['2024-01-01T00:00:00.000Z', null, '2024-02-01T00:00:00.000Z'],
    );
    expect(s.labels).toEqual(['ada', 'bob']);
    expect(s.trainedAt).toBe('2024-02-01T00:00:00.000Z');
    expect(Object.isFrozen(s)).toBe(true);
  });
});
