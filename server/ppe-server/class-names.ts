/**
 * The PPE detector's class names (app.ts): read from the `names` metadata an Ultralytics export writes, or given by
 * the operator in `PPE_CLASS_NAMES`.
 */

/** Thrown for a `names` value that is not a Python dict (or list) literal of class names. */
export class ClassNamesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClassNamesError';
  }
}

/** Python's simple escapes (`\n`, `\t`, ...) to the characters they stand for. */
const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
};

/**
 * The class names of an Ultralytics export's `names` metadata: `str()` of a Python dict from class index to
 * name, e.g. `{0: 'Hardhat', 1: 'Mask', 2: "NO-Hardhat"}` (repr quotes with `'`, or with `"` when the name
 * holds a `'`, and escapes with `\`). A list literal `['Hardhat', 'Mask']` and JSON (`{"0": "Hardhat"}`) are
 * accepted too. The indices must be 0 to n - 1, each once; the result is in index order.
 */
export function parseUltralyticsNames(text: string): string[] {
  let pos = 0;
  const fail = (what: string): never => {
    throw new ClassNamesError(`class names: expected ${what} at character ${pos + 1} of ${JSON.stringify(text.slice(0, 200))}`);
  };
  const skipSpace = () => {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
  };
  const eat = (ch: string): boolean => {
    skipSpace();
    if (text[pos] !== ch) return false;
    pos++;
    return true;
  };
  const str = (): string => {
    skipSpace();
    const quote = text[pos];
    if (quote !== "'" && quote !== '"') fail('a quoted name');
    pos++;
    let out = '';
    for (;;) {
      if (pos >= text.length) fail(`the closing ${quote}`);
      const ch = text[pos++];
      if (ch === quote) return out;
      if (ch === '\n') fail(`the closing ${quote}`);
      if (ch !== '\\') {
        out += ch;
        continue;
      }
      const e = text[pos++];
      if (e === undefined) fail('an escape');
      if (e in SIMPLE_ESCAPES) out += SIMPLE_ESCAPES[e];
      else if (e === '\n')
        continue; // line continuation
      else if (e === 'x' || e === 'u' || e === 'U') {
        const len = e === 'x' ? 2 : e === 'u' ? 4 : 8;
        const hex = text.slice(pos, pos + len);
        if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail(`${len} hex digits after \\${e}`);
        const code = Number.parseInt(hex, 16);
        if (code > 0x10ffff) fail('a code point up to 10FFFF');
        out += String.fromCodePoint(code);
        pos += len;
      } else if (e >= '0' && e <= '7') {
        const digits = /^[0-7]{1,3}/.exec(text.slice(pos - 1))![0];
        out += String.fromCodePoint(Number.parseInt(digits, 8));
        pos += digits.length - 1;
      } else out += `\\${e}`; // Python keeps unknown escapes as they are
    }
  };
  const key = (): number => {
    skipSpace();
    const quote = text[pos] === "'" || text[pos] === '"';
    const raw = quote ? str() : (/^\d+/.exec(text.slice(pos))?.[0] ?? fail('a class index'));
    if (!quote) pos += raw.length;
    if (!/^\d+$/.test(raw)) fail('a class index (a whole number)');
    return Number(raw);
  };

  const byIndex = new Map<number, string>();
  skipSpace();
  const list = text[pos] === '[';
  if (!eat(list ? '[' : '{')) fail('"{" (a dict of class index to name) or "["');
  const close = list ? ']' : '}';
  while (!eat(close)) {
    const index = list ? byIndex.size : key();
    if (!list && !eat(':')) fail('":"');
    const name = str();
    if (byIndex.has(index)) throw new ClassNamesError(`class names: index ${index} appears twice`);
    byIndex.set(index, name);
    if (eat(',')) continue;
    if (!eat(close)) fail(`"," or "${close}"`);
    break;
  }
  skipSpace();
  if (pos < text.length) fail('the end');
  if (byIndex.size === 0) throw new ClassNamesError('class names: the list is empty');
  const names: string[] = [];
  for (let i = 0; i < byIndex.size; i++) {
    const name = byIndex.get(i);
    if (name === undefined) throw new ClassNamesError(`class names: indices must be 0 to ${byIndex.size - 1}; ${i} is missing`);
    names.push(name);
  }
  return names;
}

/** `PPE_CLASS_NAMES`: comma-separated names in class order, blanks around each trimmed; none may be empty. */
export function parseClassNameList(text: string): string[] {
  const names = text.split(',').map((n) => n.trim());
  if (names.some((n) => n === '')) throw new ClassNamesError('class names: a comma-separated list of non-empty names is needed');
  return names;
}
