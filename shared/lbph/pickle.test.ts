import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { decodeLabelMapPickle, encodeLabelMapPickle } from './pickle.js';

const PYTHON = '/usr/bin/python3';

/** Runs Python with stdin bytes; returns stdout bytes. */
function python(script: string, input?: Uint8Array): Buffer {
  const r = spawnSync(PYTHON, ['-c', script], { input, maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr?.toString() || r.error}`);
  return r.stdout;
}

/** Python's own pickle of the dict given as JSON (keys keep their order), with a protocol. */
function pythonPickle(entries: [string, number][], protocol?: number): Uint8Array {
  const out = python(
    `import sys, json, pickle
d = dict(json.loads(sys.stdin.buffer.read().decode('utf-8')))
sys.stdout.buffer.write(pickle.dumps(d${protocol === undefined ? '' : `, protocol=${protocol}`}))`,
    new TextEncoder().encode(JSON.stringify(entries)),
  );
  return new Uint8Array(out);
}

/** What Python reads from our bytes, as JSON entries (order kept). */
function pythonLoad(bytes: Uint8Array): [string, number][] {
  return JSON.parse(
    python(
      `import sys, json, pickle
d = pickle.load(sys.stdin.buffer)
assert type(d) is dict and all(type(k) is str and type(v) is int for k, v in d.items())
sys.stdout.write(json.dumps(list(d.items())))`,
      bytes,
    ).toString('utf8'),
  );
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

const SMALL: [string, number][][] = [
  [],
  [['alice', 0]],
  [
    ['alice', 0],
    ['bob', 1],
  ],
  [
    ['alice', 0],
    ['bob', 300],
    ['çé😀', 70000],
    ['neg', -5],
    ['big', 2 ** 40],
    ['minus big', -(2 ** 40)],
  ],
  [
    ['x'.repeat(300), 1],
    ['y', 2],
    ['Zoë', 255],
    ['ünïcødé 名前', 256],
    ['edge', 65535],
    ['e2', 65536],
  ],
  [
    ['int32max', 2 ** 31 - 1],
    ['int32min', -(2 ** 31)],
    ['over', 2 ** 31],
    ['under', -(2 ** 31) - 1],
    ['m1', -1],
    ['p2_15', 32768],
    ['n2_15', -32768],
    ['safe', Number.MAX_SAFE_INTEGER],
    ['nsafe', Number.MIN_SAFE_INTEGER],
    ['p128', 128],
    ['n128', -128],
    ['n129', -129],
    ['n2_63', -256],
    ['n65536', -65536],
  ],
];

function bigDict(n: number, keyLen: number, seed = 1): [string, number][] {
  let s = seed;
  return Array.from({ length: n }, (_, i) => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return [`k${i}_${'é'.repeat((s % keyLen) + 1)}`, (s % 200000) - 1000] as [string, number];
  });
}

describe('encodeLabelMapPickle', () => {
  SMALL.forEach((entries, i) => {
    it(`writes the same bytes as Python's pickle.dumps (case ${i})`, () => {
      const ours = encodeLabelMapPickle(new Map(entries));
      expect(hex(ours)).toBe(hex(pythonPickle(entries)));
    });
  });

  it('matches Python on multi-frame dicts, batch edges and payloads over 64 KiB', () => {
    const cases: [string, number][][] = [
      bigDict(999, 3),
      bigDict(1000, 3),
      bigDict(1001, 3),
      bigDict(2000, 40, 7),
      bigDict(3500, 90, 3),
      [
        ['a'.repeat(70000), 1],
        ['b', 2],
      ],
      [
        ['c', 3],
        ['é'.repeat(40000), 4],
        ['d', 5],
      ],
      [['only'.repeat(20000), 7]],
      // The frame reaches 64 KiB exactly on the last value of a batch / of the dict: where the
      // boundary check sits (before each save) decides which frame SETITEMS, MARK and STOP go in.
      ...[999, 1000].flatMap((n) =>
        [0, 1, 2].map((extra) => {
          const e: [string, number][] = Array.from({ length: n - 1 }, (_, i) => [String(i).padEnd(60, 'x'), 1]);
          const used = 3 + (n - 1) * 65; // "}\x94(" then 65 bytes per entry
          e.push(['z'.repeat(65536 - used - 8 + extra), 1]); // BINUNICODE key: 8 bytes of overhead
          return e;
        }),
      ),
    ];
    for (const entries of cases) {
      const ours = encodeLabelMapPickle(new Map(entries));
      const theirs = pythonPickle(entries);
      expect(ours.length).toBe(theirs.length);
      expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
    }
  });

  it('is read back by Python pickle.load', () => {
    const entries = SMALL[4];
    expect(pythonLoad(encodeLabelMapPickle(Object.fromEntries(entries)))).toEqual(entries);
  });

  it('rejects ids that are not safe integers', () => {
    expect(() => encodeLabelMapPickle({ a: 1.5 })).toThrow(/safe integer/);
    expect(() => encodeLabelMapPickle({ a: 2 ** 60 })).toThrow(/safe integer/);
  });
});

describe('decodeLabelMapPickle', () => {
  const entries: [string, number][] = [
    ['alice', 0],
    ['bob', 300],
    ['çé😀', 70000],
    ['neg', -5],
    ['big', 2 ** 40],
    ['back\\slash\nnew', 3],
    ['x'.repeat(300), 9],
  ];
  for (const protocol of [0, 1, 2, 3, 4, 5]) {
    it(`reads Python's protocol ${protocol}`, () => {
      const d = decodeLabelMapPickle(pythonPickle(entries, protocol));
      expect(Object.entries(d)).toEqual(entries);
    });
  }

  it('reads big multi-frame pickles and round-trips ours', () => {
    const big = bigDict(2500, 60, 5);
    expect(Object.entries(decodeLabelMapPickle(pythonPickle(big)))).toEqual(big);
    expect(Object.entries(decodeLabelMapPickle(encodeLabelMapPickle(new Map(big))))).toEqual(big);
    expect(decodeLabelMapPickle(encodeLabelMapPickle({}))).toEqual({});
  });

  it('keeps a "__proto__" label as an ordinary key', () => {
    const d = decodeLabelMapPickle(
      pythonPickle([
        ['__proto__', 4],
        ['a', 1],
      ]),
    );
    expect(Object.keys(d)).toEqual(['__proto__', 'a']);
    // biome-ignore lint/suspicious/noProto: on purpose, the decoded map must hold "__proto__" as an own data key, not the prototype accessor
    expect(d['__proto__']).toBe(4);
    expect(Object.getPrototypeOf(d)).toBe(Object.prototype);
  });

  const bad: [string, Uint8Array | (() => Uint8Array), RegExp][] = [
    ['empty input', new Uint8Array(0), /empty/],
    ['truncated data', () => encodeLabelMapPickle({ alice: 1 }).slice(0, -3), /truncated/],
    ['a string cut short', () => new Uint8Array([0x80, 4, 0x7d, 0x8c, 10, 0x61, 0x62]), /truncated/],
    ['a list', () => pythonPickle([]).map((b) => (b === 0x7d ? 0x5d : b)), /EMPTY_LIST|not a dict/],
    [
      'a class instance',
      () => new Uint8Array(python(`import pickle, sys, collections; sys.stdout.buffer.write(pickle.dumps(collections.OrderedDict(a=1)))`)),
      /unsupported opcode (STACK_GLOBAL|GLOBAL)/,
    ],
    ['an os.system call', () => new Uint8Array(Buffer.from("cos\nsystem\n(S'echo hi'\ntR.", 'latin1')), /unsupported opcode GLOBAL/],
    ['a float value', () => new Uint8Array(python(`import pickle, sys; sys.stdout.buffer.write(pickle.dumps({'a': 1.5}))`)), /BINFLOAT/],
    [
      'a bool value',
      () => new Uint8Array(python(`import pickle, sys; sys.stdout.buffer.write(pickle.dumps({'a': True}, protocol=0))`)),
      /bool/,
    ],
    ['an int key', () => new Uint8Array(python(`import pickle, sys; sys.stdout.buffer.write(pickle.dumps({1: 2}))`)), /key is not a str/],
    ['bytes after STOP', () => Uint8Array.from([...encodeLabelMapPickle({ a: 1 }), 0]), /after STOP/],
    ['a huge int', () => new Uint8Array(python(`import pickle, sys; sys.stdout.buffer.write(pickle.dumps({'a': 2**70}))`)), /safe integer/],
    ['invalid UTF-8', () => new Uint8Array([0x80, 4, 0x7d, 0x8c, 1, 0xff, 0x4b, 1, 0x73, 0x2e]), /UTF-8/],
    ['a future protocol', () => new Uint8Array([0x80, 6, 0x7d, 0x2e]), /protocol 6/],
  ];
  for (const [what, input, message] of bad) {
    it(`rejects ${what} with a clear error`, () => {
      expect(() => decodeLabelMapPickle(typeof input === 'function' ? input() : input)).toThrow(message);
    });
  }
});
