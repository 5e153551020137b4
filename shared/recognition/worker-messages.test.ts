import { describe, expect, it } from 'vitest';
import { answer, errorText, type OpHandlers } from './worker-messages.js';

interface Ops {
  double: { args: number; result: number };
  later: { args: string; result: string };
  fail: { args: void; result: void };
}

const handlers: OpHandlers<Ops> = {
  double: (n) => n * 2,
  later: async (s) => `${s}!`,
  fail: () => {
    throw new Error('no luck');
  },
};

describe('answer', () => {
  it('runs the operation named in the request and pairs the reply with its id', async () => {
    expect(await answer(handlers, { id: 1, op: 'double', args: 21 })).toEqual({ id: 1, ok: true, result: 42 });
    expect(await answer(handlers, { id: 2, op: 'later', args: 'done' })).toEqual({ id: 2, ok: true, result: 'done!' });
  });

  it('turns a failure or an unknown operation into an error reply', async () => {
    expect(await answer(handlers, { id: 3, op: 'fail', args: undefined })).toEqual({ id: 3, ok: false, error: 'no luck' });
    expect(await answer(handlers, { id: 4, op: 'nope' as 'fail', args: undefined })).toEqual({
      id: 4,
      ok: false,
      error: 'unknown operation "nope"',
    });
  });

  it('reads the message of anything thrown', () => {
    expect(errorText(new Error('a'))).toBe('a');
    expect(errorText({ message: 'b' })).toBe('b');
    expect(errorText('c')).toBe('c');
  });
});
