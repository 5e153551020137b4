import { describe, expect, it } from 'vitest';
import { alreadyStored } from './stored-counts';

describe('alreadyStored', () => {
  it('does not count the photos just saved from the page as photos already stored', () => {
    const saved = Array.from({ length: 4 }, () => ({ status: 'stored', label: 'grace' }));
    expect(alreadyStored([{ label: 'grace', images: 4 }], saved)).toEqual({ grace: 0 });
    expect(alreadyStored([{ label: 'grace', images: 7 }], saved)).toEqual({ grace: 3 });
  });

  it('counts what is not saved from the page: new, failed and queued photos, other people, an old count', () => {
    const items = [
      { status: 'new' },
      { status: 'failed', label: 'grace' },
      { status: 'queued', label: 'grace' },
      { status: 'stored', label: 'ada' },
    ];
    expect(
      alreadyStored(
        [
          { label: 'grace', images: 2 },
          { label: 'ada', images: 5 },
        ],
        items,
      ),
    ).toEqual({ grace: 2, ada: 4 });
    // The server's list not refreshed yet after a save: never below 0.
    expect(alreadyStored([{ label: 'ada', images: 0 }], items)).toEqual({ ada: 0 });
  });
});
