/**
 * JSON bodies for the fuzzer: a route's well-formed body, then mutated, either as a value (a field dropped,
 * retyped, replaced by random JSON, keys added such as `__proto__`, the whole body wrapped or replaced) or as
 * text (cut short, bytes flipped, a BOM, trailing garbage, duplicate keys, deep nesting, huge numbers, a body
 * over the size limit).
 */
import fc from 'fast-check';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Values that have the wrong type for almost any field, and the edge values of right types. */
const ODD_VALUE: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    false,
    0,
    -0,
    -1,
    1e308,
    -1e308,
    5e-324,
    2 ** 53 + 1,
    0.1,
    '',
    ' ',
    '0',
    'NaN',
    'Infinity',
    '1e999',
    'true',
    'null',
    [],
    {},
    [null],
    { $gt: '' },
    'a'.repeat(100_000),
    '\u0000',
    // A lone surrogate (JSON `"\ud800"`): it may land in a label field, which must refuse it.
    '\ud800',
  ),
  fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
);

export type ValueMutation =
  | { kind: 'none' }
  | { kind: 'drop'; pick: number }
  | { kind: 'set'; path: number[]; value: Json }
  | { kind: 'add'; key: string; value: Json }
  | { kind: 'wrap' }
  | { kind: 'replace'; value: Json };

const KEY = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', ' image', 'IMAGE', 'label\u0000'),
  fc.string({ maxLength: 8 }),
);

export const valueMutation: fc.Arbitrary<ValueMutation> = fc.oneof(
  { weight: 4, arbitrary: fc.constant<ValueMutation>({ kind: 'none' }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('drop' as const), pick: fc.nat() }) },
  {
    weight: 5,
    arbitrary: fc.record({ kind: fc.constant('set' as const), path: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), value: ODD_VALUE }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), key: KEY, value: ODD_VALUE }) },
  { weight: 1, arbitrary: fc.constant<ValueMutation>({ kind: 'wrap' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), value: ODD_VALUE }) },
);

function isObject(v: Json): v is { [k: string]: Json } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Replaces the value at a path of child indexes (each taken modulo the children there). */
function setAt(value: Json, path: number[], replacement: Json): Json {
  if (path.length === 0) return replacement;
  const [i, ...rest] = path;
  if (Array.isArray(value)) {
    if (value.length === 0) return [replacement];
    const copy = [...value];
    copy[i % copy.length] = setAt(copy[i % copy.length], rest, replacement);
    return copy;
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return { x: replacement };
    const key = keys[i % keys.length];
    // defineProperty: a key such as `__proto__` must stay an own key, as JSON.parse makes it on the server.
    const copy = { ...value };
    Object.defineProperty(copy, key, { value: setAt(value[key], rest, replacement), enumerable: true, writable: true, configurable: true });
    return copy;
  }
  return replacement;
}

export function mutateValue(value: Json, m: ValueMutation): Json {
  switch (m.kind) {
    case 'none':
      return value;
    case 'drop': {
      if (!isObject(value)) return value;
      const keys = Object.keys(value);
      if (keys.length === 0) return value;
      const { [keys[m.pick % keys.length]]: _gone, ...rest } = value;
      return rest;
    }
    case 'set':
      return setAt(value, m.path, m.value);
    case 'add': {
      if (!isObject(value)) return value;
      const copy = { ...value };
      Object.defineProperty(copy, m.key, { value: m.value, enumerable: true, writable: true, configurable: true });
      return copy;
    }
    case 'wrap':
      return [value];
    case 'replace':
      return m.value;
  }
}

/** Just past the fuzz target's MAX_BODY_BYTES (1 MiB). */
const OVERSIZED_BYTES = 1024 * 1024 + 1;

export type TextMutation =
  | { kind: 'none' }
  | { kind: 'truncate'; at: number }
  | { kind: 'flip'; at: number; char: string }
  | { kind: 'bom' }
  | { kind: 'trailing'; text: string }
  | { kind: 'duplicate-key' }
  | { kind: 'nested'; depth: number }
  | { kind: 'big-number' }
  | { kind: 'latin1' }
  | { kind: 'oversized' };

export const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<TextMutation>({ kind: 'none' }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('flip' as const),
      at: fc.nat(),
      char: fc.constantFrom('"', '{', '}', ',', ':', '\\', '\u0000', '\n', 'x', '\u2028', '\ud800'),
    }),
  },
  { weight: 1, arbitrary: fc.constant<TextMutation>({ kind: 'bom' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('trailing' as const), text: fc.constantFrom('x', '}', ' {}', '\u0000', '// c') }) },
  { weight: 1, arbitrary: fc.constant<TextMutation>({ kind: 'duplicate-key' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nested' as const), depth: fc.constantFrom(100, 5_000, 200_000) }) },
  { weight: 1, arbitrary: fc.constant<TextMutation>({ kind: 'big-number' }) },
  { weight: 1, arbitrary: fc.constant<TextMutation>({ kind: 'latin1' }) },
  { weight: 1, arbitrary: fc.constant<TextMutation>({ kind: 'oversized' }) },
);

/** The body's bytes after a text mutation (`latin1` sends the text in Latin-1, not UTF-8). */
export function mutateText(text: string, m: TextMutation): Uint8Array {
  const bytes = (t: string) => new Uint8Array(Buffer.from(t, 'utf8'));
  switch (m.kind) {
    case 'none':
      return bytes(text);
    case 'truncate':
      return bytes(text.slice(0, Math.floor(text.length * m.at)));
    case 'flip': {
      const at = text.length ? m.at % text.length : 0;
      return bytes(text.slice(0, at) + m.char + text.slice(at + 1));
    }
    case 'bom':
      return bytes(`\ufeff${text}`);
    case 'trailing':
      return bytes(text + m.text);
    case 'duplicate-key':
      // The same key twice: JSON.parse keeps the last, so a check must not look at the first.
      return bytes(text.startsWith('{') && text.length > 2 ? `{"label":"..","image":"x",${text.slice(1)}` : text);
    case 'nested':
      return bytes(`${'['.repeat(m.depth)}${']'.repeat(m.depth)}`);
    case 'big-number':
      return bytes(text.replace(/(:\s*)(-?\d+(\.\d+)?)/, `$1${'9'.repeat(400)}`));
    case 'latin1':
      return new Uint8Array(Buffer.from(text, 'latin1'));
    case 'oversized':
      // Valid JSON (trailing whitespace) past the fuzzed service's 1 MiB MAX_BODY_BYTES: a 413.
      return bytes(text + ' '.repeat(OVERSIZED_BYTES));
  }
}

/** A JSON body: `valid` (a well-formed body of the route) mutated as a value, then as text. */
export function jsonBody(valid: fc.Arbitrary<Json>): fc.Arbitrary<{ bytes: Uint8Array; mutated: boolean; value: Json }> {
  return fc.tuple(valid, valueMutation, textMutation).map(([value, vm, tm]) => {
    const mutatedValue = mutateValue(value, vm);
    return { bytes: mutateText(JSON.stringify(mutatedValue), tm), mutated: vm.kind !== 'none' || tm.kind !== 'none', value: mutatedValue };
  });
}

export type { Json };
