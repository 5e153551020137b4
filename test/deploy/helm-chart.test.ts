/**
 * The Helm chart in deploy/helm/lookout, checked WITHOUT Helm.
 *
 * No `helm` binary could be installed where this chart was written, so neither `helm lint` nor `helm template`
 * has run on it. This test covers part of what they would, and is no substitute for them:
 *
 * 1. values.schema.json (draft-07, which Helm validates) accepts values.yaml and each examples/*.yaml merged over
 *    it the way Helm merges values, and refuses bad values.
 * 2. Every variable of SETTINGS and PROCESSOR_SETTINGS (server/config/settings.ts) is set by a rendered manifest
 *    or documented in the chart's README as set through extraEnv; the README's table covers every variable.
 * 3. `renderChart` below, a small renderer for the subset of Go templates the chart uses (fields, variables,
 *    if/else if/else, with, range, define/include, and the functions quote, default, toYaml, indent, nindent,
 *    int, printf, eq, ne, gt, lt, not, and, or, fail). It is NOT Helm's engine. It follows Go and Sprig where the chart
 *    depends on them: truthiness, `{{-`/`-}}` trimming, sorted map ranges, Helm's float64 numbers (printed as
 *    1e+06 from a million up, and not comparable with an int literal without `int`), missing values printing
 *    as empty. It is stricter than Go in one way: a field missing from a map is an error (catching typos),
 *    except under `extraEnv`. Each template is rendered with the defaults and with each example, the output is
 *    parsed as YAML and its structure checked, and the rendered environment is parsed by the server's own
 *    loadSettings/loadProcessorSettings.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { loadProcessorSettings, loadSettings, PROCESSOR_SETTINGS, SETTINGS } from '../../server/config/settings.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHART = path.join(ROOT, 'deploy/helm/lookout');
const RELEASE = 'lookout';
const NAMESPACE = 'vision';

type Obj = Record<string, any>;

// ---------------------------------------------------------------------------------------------------------------
// A renderer for the chart's subset of Go templates (not Helm's engine; see the header).
// ---------------------------------------------------------------------------------------------------------------

type Operand =
  | { k: 'field'; base: string; path: string[] } // base: '.', '$' or a variable name such as '$name'
  | { k: 'lit'; v: unknown }
  | { k: 'fn'; name: string }
  | { k: 'sub'; p: Pipeline };
interface Pipeline {
  decl: string[];
  cmds: Operand[][];
}
type TNode =
  | { t: 'text'; v: string }
  | { t: 'action'; p: Pipeline }
  | { t: 'if'; branches: { cond: Pipeline; body: TNode[] }[]; otherwise: TNode[] }
  | { t: 'with'; p: Pipeline; body: TNode[]; otherwise: TNode[] }
  | { t: 'range'; p: Pipeline; body: TNode[]; otherwise: TNode[] };

class TemplateError extends Error {}

/** Go's integers (int literals, `int`) are bigints here; values from YAML are numbers, as Helm's float64. */
function kindOf(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'float';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'slice' : 'map';
}

function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === 0n || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** fmt's %v of a float64: shortest digits, exponent form below 1e-4 and from 1e6 up (`1e+06`). */
function goFloat(n: number): string {
  if (n === 0 || !Number.isFinite(n)) return String(n);
  const [mantissa, e] = n.toExponential().split('e');
  const exp = Number(e);
  if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(n);
}

function toText(v: unknown): string {
  switch (kindOf(v)) {
    case 'nil':
      return ''; // Helm turns "<no value>" into ""
    case 'float':
      return goFloat(v as number);
    case 'string':
    case 'int':
    case 'bool':
      return String(v);
    default:
      throw new TemplateError(`printing a ${kindOf(v)} (Go would print its %v form): ${JSON.stringify(v)}`);
  }
}

function compare(op: string, a: unknown, b: unknown): boolean {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka !== kb) throw new TemplateError(`${op}: incompatible types for comparison (${ka} and ${kb})`);
  if (op === 'eq') return a === b;
  if (!['int', 'float', 'string'].includes(ka)) throw new TemplateError(`${op}: invalid type for comparison (${ka})`);
  const x = a as number;
  const y = b as number;
  return op === 'gt' ? x > y : op === 'lt' ? x < y : op === 'ge' ? x >= y : x <= y;
}

function tokenize(src: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"') {
      let j = i + 1;
      while (src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      tokens.push(src.slice(i, j + 1));
      i = j + 1;
    } else if (c === '`') {
      const j = src.indexOf('`', i + 1);
      tokens.push(src.slice(i, j + 1));
      i = j + 1;
    } else if (src.startsWith(':=', i)) {
      tokens.push(':=');
      i += 2;
    } else if ('()|,'.includes(c)) {
      tokens.push(c);
      i++;
    } else {
      const m = /^[^\s()|,"`]+/.exec(src.slice(i));
      if (!m) throw new TemplateError(`cannot read ${src.slice(i)}`);
      tokens.push(m[0]);
      i += m[0].length;
    }
  }
  return tokens;
}

function parsePipeline(tokens: string[]): Pipeline {
  let rest = tokens;
  const decl: string[] = [];
  const assign = rest.indexOf(':=');
  if (assign >= 0) {
    decl.push(...rest.slice(0, assign).filter((t) => t !== ','));
    rest = rest.slice(assign + 1);
  }
  const cmds: Operand[][] = [[]];
  for (let i = 0; i < rest.length; i++) {
    const t = rest[i];
    if (t === '|') {
      cmds.push([]);
    } else if (t === '(') {
      let depth = 1;
      let j = i + 1;
      for (; depth > 0; j++) depth += rest[j] === '(' ? 1 : rest[j] === ')' ? -1 : 0;
      cmds[cmds.length - 1].push({ k: 'sub', p: parsePipeline(rest.slice(i + 1, j - 1)) });
      i = j - 1;
    } else {
      cmds[cmds.length - 1].push(parseOperand(t));
    }
  }
  if (cmds.some((c) => c.length === 0)) throw new TemplateError(`empty command in ${tokens.join(' ')}`);
  return { decl, cmds };
}

function parseOperand(t: string): Operand {
  if (t.startsWith('"')) return { k: 'lit', v: JSON.parse(t) };
  if (t.startsWith('`')) return { k: 'lit', v: t.slice(1, -1) };
  if (/^-?\d+$/.test(t)) return { k: 'lit', v: BigInt(t) };
  if (/^-?\d*\.\d+$/.test(t)) return { k: 'lit', v: Number(t) };
  if (t === 'true' || t === 'false') return { k: 'lit', v: t === 'true' };
  if (t === 'nil') return { k: 'lit', v: null };
  if (t === '.') return { k: 'field', base: '.', path: [] };
  if (t.startsWith('.')) return { k: 'field', base: '.', path: t.slice(1).split('.') };
  if (t.startsWith('$')) {
    const [base, ...p] = t.split('.');
    return { k: 'field', base, path: p };
  }
  if (/^[A-Za-z_]\w*$/.test(t)) return { k: 'fn', name: t };
  throw new TemplateError(`unknown operand ${t}`);
}

/** Parses a template file: its nodes, and the `define`d templates it holds. */
function parseTemplate(src: string, defines: Map<string, TNode[]>): TNode[] {
  type Frame = { kind: 'root' | 'if' | 'with' | 'range' | 'define'; nodes: TNode[]; node?: TNode; name?: string };
  const stack: Frame[] = [{ kind: 'root', nodes: [] }];
  const top = () => stack[stack.length - 1];
  let pos = 0;
  let trimNext = false;
  while (pos <= src.length) {
    const open = src.indexOf('{{', pos);
    let text = src.slice(pos, open < 0 ? src.length : open);
    if (trimNext) text = text.replace(/^\s+/, '');
    trimNext = false;
    if (open < 0) {
      if (text) top().nodes.push({ t: 'text', v: text });
      break;
    }
    let start = open + 2;
    if (/^-\s/.test(src.slice(start))) {
      text = text.replace(/\s+$/, '');
      start += 1;
    }
    if (text) top().nodes.push({ t: 'text', v: text });
    // Find the closing braces outside string literals.
    let j = start;
    let quote: string | null = null;
    for (; j < src.length; j++) {
      const c = src[j];
      if (quote) {
        if (c === '\\' && quote === '"') j++;
        else if (c === quote) quote = null;
      } else if (c === '"' || c === '`') quote = c;
      else if (src.startsWith('}}', j)) break;
    }
    if (j >= src.length) throw new TemplateError(`unclosed action at ${open}`);
    let body = src.slice(start, j);
    if (/\s-$/.test(body)) {
      body = body.slice(0, -1);
      trimNext = true;
    }
    pos = j + 2;
    body = body.trim();
    if (body.startsWith('/*')) {
      if (!body.endsWith('*/')) throw new TemplateError(`unclosed comment at ${open}`);
      continue;
    }
    const tokens = tokenize(body);
    const word = tokens[0];
    if (word === 'if' || word === 'with' || word === 'range') {
      const p = parsePipeline(tokens.slice(1));
      const node: TNode =
        word === 'if'
          ? { t: 'if', branches: [{ cond: p, body: [] }], otherwise: [] }
          : word === 'with'
            ? { t: 'with', p, body: [], otherwise: [] }
            : { t: 'range', p, body: [], otherwise: [] };
      top().nodes.push(node);
      stack.push({ kind: word, nodes: word === 'if' ? (node as any).branches[0].body : (node as any).body, node });
    } else if (word === 'else') {
      const f = top();
      if (f.kind === 'if' && tokens[1] === 'if') {
        const branch = { cond: parsePipeline(tokens.slice(2)), body: [] as TNode[] };
        (f.node as any).branches.push(branch);
        f.nodes = branch.body;
      } else if (tokens.length === 1 && (f.kind === 'if' || f.kind === 'with' || f.kind === 'range')) {
        f.nodes = (f.node as any).otherwise;
      } else {
        throw new TemplateError(`unexpected {{ ${body} }}`);
      }
    } else if (word === 'end') {
      const f = stack.pop();
      if (!f || f.kind === 'root') throw new TemplateError('unexpected {{ end }}');
      if (f.kind === 'define') defines.set(f.name!, f.nodes);
    } else if (word === 'define') {
      stack.push({ kind: 'define', nodes: [], name: JSON.parse(tokens[1]) });
    } else {
      top().nodes.push({ t: 'action', p: parsePipeline(tokens) });
    }
  }
  if (stack.length !== 1) throw new TemplateError(`unclosed {{ ${top().kind} }}`);
  return stack[0].nodes;
}

interface Scope {
  dot: unknown;
  vars: Map<string, unknown>;
}

class Renderer {
  readonly defines = new Map<string, TNode[]>();

  exec(nodes: TNode[], scope: Scope): string {
    let out = '';
    for (const node of nodes) {
      if (node.t === 'text') out += node.v;
      else if (node.t === 'action') {
        const v = this.pipeline(node.p, scope);
        if (node.p.decl.length === 0) out += toText(v);
      } else if (node.t === 'if') {
        const branch = node.branches.find((b) => truthy(this.pipeline(b.cond, scope)));
        out += this.exec(branch ? branch.body : node.otherwise, { ...scope, vars: new Map(scope.vars) });
      } else if (node.t === 'with') {
        const v = this.pipeline(node.p, scope);
        out += truthy(v)
          ? this.exec(node.body, { ...scope, dot: v, vars: new Map(scope.vars) })
          : this.exec(node.otherwise, { ...scope, vars: new Map(scope.vars) });
      } else {
        const v = this.pipeline({ decl: [], cmds: node.p.cmds }, scope);
        const entries: [unknown, unknown][] = Array.isArray(v)
          ? v.map((x, i) => [BigInt(i), x])
          : v && typeof v === 'object'
            ? Object.keys(v)
                .sort()
                .map((k) => [k, (v as Obj)[k]])
            : truthy(v)
              ? (() => {
                  throw new TemplateError(`range over ${kindOf(v)}`);
                })()
              : [];
        if (entries.length === 0) out += this.exec(node.otherwise, scope);
        for (const [key, value] of entries) {
          const vars = new Map(scope.vars);
          if (node.p.decl.length === 1) vars.set(node.p.decl[0], value);
          if (node.p.decl.length === 2) {
            vars.set(node.p.decl[0], key);
            vars.set(node.p.decl[1], value);
          }
          out += this.exec(node.body, { ...scope, dot: value, vars });
        }
      }
    }
    return out;
  }

  pipeline(p: Pipeline, scope: Scope): unknown {
    let value: unknown;
    p.cmds.forEach((cmd, i) => {
      value = this.command(cmd, scope, i === 0 ? [] : [value]);
    });
    if (p.decl.length === 1) scope.vars.set(p.decl[0], value);
    return value;
  }

  command(cmd: Operand[], scope: Scope, piped: unknown[]): unknown {
    const [head, ...args] = cmd;
    if (head.k !== 'fn') {
      if (args.length || piped.length) throw new TemplateError('a value cannot take arguments');
      return this.operand(head, scope);
    }
    const values = [...args.map((a) => this.operand(a, scope)), ...piped];
    return this.call(head.name, values);
  }

  operand(o: Operand, scope: Scope): unknown {
    if (o.k === 'lit') return o.v;
    if (o.k === 'sub') return this.pipeline(o.p, scope);
    if (o.k === 'fn') return this.call(o.name, []);
    let v: unknown;
    if (o.base === '.') v = scope.dot;
    else if (scope.vars.has(o.base)) v = scope.vars.get(o.base);
    else throw new TemplateError(`undefined variable ${o.base}`);
    const walked: string[] = [];
    for (const key of o.path) {
      if (v === null || v === undefined || typeof v !== 'object')
        throw new TemplateError(`nil pointer evaluating .${[...walked, key].join('.')}`);
      if (!(key in (v as Obj)) && walked[walked.length - 1] !== 'extraEnv')
        throw new TemplateError(`no field .${[...walked, key].join('.')} (a typo? values.yaml has none)`);
      v = (v as Obj)[key];
      walked.push(key);
    }
    return v;
  }

  call(name: string, a: unknown[]): unknown {
    const arity = (n: number) => {
      if (a.length !== n) throw new TemplateError(`${name}: wants ${n} arguments, got ${a.length}`);
    };
    switch (name) {
      case 'include': {
        arity(2);
        const body = this.defines.get(a[0] as string);
        if (!body) throw new TemplateError(`include: no template "${a[0]}"`);
        return this.exec(body, { dot: a[1], vars: new Map([['$', a[1]]]) });
      }
      case 'quote':
        return a
          .filter((x) => x !== null && x !== undefined)
          .map((x) => JSON.stringify(toText(x)))
          .join(' ');
      case 'default':
        arity(2);
        return truthy(a[1]) ? a[1] : a[0];
      case 'toYaml':
        arity(1);
        return a[0] === null || a[0] === undefined ? 'null' : YAML.stringify(a[0]).trimEnd();
      case 'indent':
      case 'nindent': {
        arity(2);
        const pad = ' '.repeat(Number(a[0]));
        const s = pad + toText(a[1]).replaceAll('\n', `\n${pad}`);
        return name === 'nindent' ? `\n${s}` : s;
      }
      case 'int': {
        arity(1);
        const v = a[0];
        if (v === null || v === undefined || v === '') return 0n;
        if (typeof v === 'bigint') return v;
        if (typeof v === 'number') return BigInt(Math.trunc(v));
        if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return BigInt(v.trim());
        throw new TemplateError(`int: cannot convert ${JSON.stringify(v)}`);
      }
      case 'printf': {
        const [format, ...rest] = a as [string, ...unknown[]];
        let i = 0;
        return format.replace(/%[sdv]/g, () => toText(rest[i++]));
      }
      case 'fail':
        arity(1);
        throw new TemplateError(`execution error: ${toText(a[0])}`);
      case 'not':
        arity(1);
        return !truthy(a[0]);
      case 'and':
        return a.find((x) => !truthy(x)) ?? a[a.length - 1];
      case 'or':
        return a.find((x) => truthy(x)) ?? a[a.length - 1];
      case 'eq':
      case 'gt':
      case 'lt':
      case 'ge':
      case 'le':
        arity(2);
        return compare(name, a[0], a[1]);
      case 'ne':
        arity(2);
        return !compare('eq', a[0], a[1]);
      default:
        throw new TemplateError(`function ${name} is not in the subset this renderer knows`);
    }
  }
}

/** Helm's value merge: maps merge key by key, anything else replaces, null deletes. */
function mergeValues(base: Obj, over: Obj): Obj {
  const out: Obj = structuredClone(base);
  for (const [key, value] of Object.entries(over)) {
    if (value === null) delete out[key];
    else if (isMap(value) && isMap(out[key])) out[key] = mergeValues(out[key], value);
    else out[key] = structuredClone(value);
  }
  return out;
}
const isMap = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function readYaml(file: string): Obj {
  return (YAML.parse(readFileSync(file, 'utf8')) ?? {}) as Obj;
}

const chartMeta = readYaml(path.join(CHART, 'Chart.yaml'));
const defaults = readYaml(path.join(CHART, 'values.yaml'));
const templateFiles = readdirSync(path.join(CHART, 'templates')).sort();
/** A Kubernetes manifest among the examples (e.g. the CloudNativePG Cluster), applied with kubectl: not values. */
const isManifest = (file: string) =>
  YAML.parseAllDocuments(readFileSync(path.join(CHART, 'examples', file), 'utf8')).some((d) => {
    const js = d.toJS();
    return isMap(js) && 'apiVersion' in js && 'kind' in js;
  });
const exampleYamls = readdirSync(path.join(CHART, 'examples'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();
const exampleFiles = exampleYamls.filter((f) => !isManifest(f));
const manifestFiles = exampleYamls.filter(isManifest);

interface Rendered {
  values: Obj;
  docs: Obj[];
  /** Rendered text per template file (before YAML parsing). */
  files: Record<string, string>;
}

function renderChart(overrides: Obj = {}): Rendered {
  const values = mergeValues(defaults, overrides);
  const renderer = new Renderer();
  const parsed: [string, TNode[]][] = templateFiles.map((f) => [
    f,
    parseTemplate(readFileSync(path.join(CHART, 'templates', f), 'utf8'), renderer.defines),
  ]);
  const root = {
    Values: values,
    Release: { Name: RELEASE, Namespace: NAMESPACE, Service: 'Helm', IsInstall: true, IsUpgrade: false },
    Chart: { Name: chartMeta.name, Version: chartMeta.version, AppVersion: chartMeta.appVersion },
  };
  const files: Record<string, string> = {};
  const docs: Obj[] = [];
  for (const [file, nodes] of parsed) {
    if (file.startsWith('_')) continue; // Helm renders no partials
    let text: string;
    try {
      text = renderer.exec(nodes, { dot: root, vars: new Map([['$', root]]) });
    } catch (err) {
      throw new Error(`${file}: ${(err as Error).message}`);
    }
    files[file] = text;
    for (const doc of YAML.parseAllDocuments(text)) {
      if (doc.errors.length) throw new Error(`${file} is not valid YAML: ${doc.errors[0].message}\n${text}`);
      const js = doc.toJS();
      if (js !== null && js !== undefined) docs.push(js);
    }
  }
  return { values, docs, files };
}

// Helpers over rendered manifests.
const full = (name: string) => `${RELEASE}-${name}`;
const find = (r: Rendered, kind: string, name: string) => r.docs.find((d) => d.kind === kind && d.metadata?.name === name);
const get = (r: Rendered, kind: string, name: string): Obj => {
  const doc = find(r, kind, name);
  if (!doc) throw new Error(`no ${kind} ${name}; rendered: ${r.docs.map((d) => `${d.kind}/${d.metadata?.name}`).join(', ')}`);
  return doc;
};
const container = (deployment: Obj, name: string): Obj => {
  const c = deployment.spec.template.spec.containers.find((x: Obj) => x.name === name);
  if (!c) throw new Error(`no container ${name} in ${deployment.metadata.name}`);
  return c;
};

/** What a secretKeyRef stands for in containerEnv, where the server's parser wants a certain form. */
const SECRET_STAND_INS: Record<string, string> = {
  MAIL_SMTP_URL: 'smtp://user:secret@smtp.example.com:587',
  DATABASE_URL: 'postgres://lookout:secret@postgres.example.com:5432/lookout',
};

/** The environment a container sees: its ConfigMaps (envFrom) then its env; secretKeyRef gives a stand-in. */
function containerEnv(r: Rendered, c: Obj): { env: Record<string, string>; fromSecret: Record<string, Obj> } {
  const env: Record<string, string> = {};
  const fromSecret: Record<string, Obj> = {};
  for (const from of c.envFrom ?? []) {
    expect(from.configMapRef, 'envFrom takes ConfigMaps only; secrets come one key at a time').toBeTruthy();
    Object.assign(env, get(r, 'ConfigMap', from.configMapRef.name).data);
  }
  for (const e of c.env ?? []) {
    if (e.valueFrom) {
      expect(e.value, `${e.name}: value and valueFrom`).toBeUndefined();
      fromSecret[e.name] = e.valueFrom.secretKeyRef;
      env[e.name] = SECRET_STAND_INS[e.name] ?? 'from-a-secret';
    } else {
      env[e.name] = e.value;
    }
  }
  return { env, fromSecret };
}

const examples: [string, Obj][] = exampleFiles.map((f) => [f, readYaml(path.join(CHART, 'examples', f))]);
const renders: [string, Rendered][] = [['defaults', renderChart()], ...examples.map(([f, v]): [string, Rendered] => [f, renderChart(v)])];

// ---------------------------------------------------------------------------------------------------------------

describe('the template renderer (a stand-in for Helm, checked on the Go semantics the chart relies on)', () => {
  const render = (src: string, values: Obj = {}) => {
    const r = new Renderer();
    const nodes = parseTemplate(src, r.defines);
    const root = { Values: values };
    return r.exec(nodes, { dot: root, vars: new Map([['$', root]]) });
  };

  it('trims whitespace at {{- and -}}, and keeps it otherwise', () => {
    expect(render('a:\n  {{- if .Values.x }}\n  b: 1\n  {{- end }}\nc: 2\n', { x: true })).toBe('a:\n  b: 1\nc: 2\n');
    expect(render('a {{ "b" }} {{- " c" -}} \n d')).toBe('a b cd');
    expect(render('{{/* a comment */}}x')).toBe('x');
  });

  it("prints numbers as Helm's float64 (1e+06 from a million up) unless passed through int", () => {
    expect(render('{{ .Values.n }}|{{ .Values.n | int }}|{{ .Values.f }}', { n: 3600000, f: 0.5 })).toBe('3.6e+06|3600000|0.5');
    expect(render('{{ .Values.n | quote }}', { n: 65.0 })).toBe('"65"');
  });

  it('refuses to compare a float64 value with an int literal, as Go does', () => {
    expect(() => render('{{ if gt .Values.n 1 }}x{{ end }}', { n: 2 })).toThrow(/incompatible types/);
    expect(render('{{ if gt (int .Values.n) 1 }}x{{ end }}', { n: 2 })).toBe('x');
  });

  it('ranges over a map in sorted key order, and include renders a define with its own dot', () => {
    const src = '{{- define "kv" }}{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}{{ end }}{{ include "kv" .Values.m }}';
    expect(render(src, { m: { b: '2', a: '1' } })).toBe('a=1;b=2;');
  });

  it('reports a misspelt value instead of printing nothing', () => {
    expect(() => render('{{ .Values.chat.endpiont }}', { chat: { endpoint: '' } })).toThrow(/no field \.Values\.chat\.endpiont/);
  });
});

describe('values.schema.json', () => {
  const schema = JSON.parse(readFileSync(path.join(CHART, 'values.schema.json'), 'utf8'));
  const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true });
  const validate = ajv.compile(schema);
  const errorsOf = (values: Obj) => (validate(values) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`));

  it('is draft-07, which every Helm 3 validates', () => {
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
  });

  it('accepts values.yaml', () => {
    expect(errorsOf(defaults)).toEqual([]);
  });

  it('has the examples to check', () => {
    expect(exampleFiles.length).toBeGreaterThanOrEqual(3);
  });

  it.each(examples)('accepts %s merged over values.yaml', (_file, example) => {
    expect(errorsOf(mergeValues(defaults, example))).toEqual([]);
  });

  const bad: [string, Obj, string][] = [
    ['an unknown recognition model', { recognitionModel: 'foo' }, '/recognitionModel'],
    ['a confidence threshold above 1', { remoteDetector: { confidenceThreshold: 2 } }, '/remoteDetector/confidenceThreshold'],
    ['a size that is not a quantity', { persistence: { size: 'big' } }, '/persistence/size'],
    ['a detection method that does not exist', { remoteDetector: { defaultMethod: 'gpu' } }, '/remoteDetector/defaultMethod'],
    ['a remote detector URL that is not http(s)', { remoteDetector: { url: 'ftp://models' } }, '/remoteDetector/url'],
    ['a fractional replica count', { replicaCount: 1.5 }, '/replicaCount'],
    ['a misspelt value', { replicas: 2 }, ''],
    ['a biometric threshold above 100', { biometric: { confidenceThreshold: 120 } }, '/biometric/confidenceThreshold'],
    ['a Kafka broker without a port', { kafka: { brokers: 'kafka.example.com' } }, '/kafka/brokers'],
    ['an unknown SASL mechanism', { kafka: { sasl: { mechanism: 'gssapi', username: 'u', password: 'p' } } }, '/kafka/sasl/mechanism'],
    ['SCRAM without a password', { kafka: { sasl: { mechanism: 'scram-sha-512', username: 'lookout' } } }, '/kafka/sasl/password'],
    ['a CA from both a Secret and a ConfigMap', { kafka: { tls: { caSecret: 'a', caConfigMap: 'b' } } }, ''],
    ['SMTP without a URL', { mail: { transport: 'smtp' } }, '/mail/smtpUrl'],
    ['an SMTP URL that is not smtp(s)', { mail: { transport: 'smtp', smtpUrl: 'http://mail' } }, '/mail/smtpUrl'],
    ['two processors without Kafka', { processor: { enabled: true, replicaCount: 2 } }, '/kafka/brokers'],
    ['a secret in extraEnv', { extraEnv: { KAFKA_PASSWORD: 'hunter2' } }, '/extraEnv'],
    ['an API key in extraEnv', { extraEnv: { CHAT_API_KEY: 'sk-1' } }, '/extraEnv'],
    ['a number in extraEnv (env values are strings)', { extraEnv: { WORKERS: 2 } }, '/extraEnv/WORKERS'],
    ['a chat token file from a secret that has no token', { chat: { tokenSource: 'secret' } }, '/chat/token'],
    ['a model PVC size that is not a quantity', { modelServing: { storage: { size: 'two gigs' } } }, '/modelServing/storage/size'],
    ['an unknown accessMode', { persistence: { accessMode: 'ReadOnlyMany!' } }, '/persistence/accessMode'],
    ['two API replicas without a database (the embedded one is one process only)', { replicaCount: 2 }, '/database/url'],
    ['a database URL that is not postgres(ql)://', { database: { url: 'mysql://u:p@db/lookout' } }, '/database/url'],
    ['the database URL in extraEnv', { extraEnv: { DATABASE_URL: 'postgres://u:p@db/lookout' } }, '/extraEnv'],
    ['an unknown sightings source', { sightings: { sources: ['api', 'kiosk'] } }, '/sightings/sources/1'],
    ['a sightings source twice', { sightings: { sources: ['api', 'api'] } }, '/sightings/sources'],
    ['sightings as a comma-separated string (a list is wanted)', { sightings: { sources: 'api,page' } }, '/sightings/sources'],
    ['a sightings retention of 0 days', { sightings: { retentionDays: 0 } }, '/sightings/retentionDays'],
    ['a fractional sightings maximum', { sightings: { max: 10.5 } }, '/sightings/max'],
    ['a negative sightings interval', { sightings: { intervalSeconds: -1 } }, '/sightings/intervalSeconds'],
    ['a fractional audit retention', { audit: { retentionDays: 1.5 } }, '/audit/retentionDays'],
    ['a cache size limit that is not a quantity', { persistence: { cacheSizeLimit: 'lots' } }, '/persistence/cacheSizeLimit'],
    [
      'a disruption budget that lets no pod go (a drain would wait forever)',
      { podDisruptionBudget: { maxUnavailable: 0 } },
      '/podDisruptionBudget/maxUnavailable',
    ],
    ['a disruption budget in words', { podDisruptionBudget: { maxUnavailable: 'one' } }, '/podDisruptionBudget/maxUnavailable'],
  ];
  it.each(bad)('refuses %s', (_what, override, where) => {
    const errors = errorsOf(mergeValues(defaults, override));
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((e) => e.startsWith(`${where} `))).toBe(true);
  });

  it('accepts more than one API replica with PostgreSQL, from a value or an existing Secret', () => {
    expect(errorsOf(mergeValues(defaults, { replicaCount: 3, database: { url: 'postgresql://u:p@pg:5432/lookout' } }))).toEqual([]);
    expect(errorsOf(mergeValues(defaults, { replicaCount: 3, database: { existingSecret: 'pg-app', existingSecretKey: 'uri' } }))).toEqual(
      [],
    );
    expect(errorsOf(mergeValues(defaults, { replicaCount: 0 }))).toEqual([]); // scaled down: no process, no database
  });

  it('agrees with the server on the range of each sightings and audit value', () => {
    const cases: [string, string, unknown[]][] = [
      ['sightings.retentionDays', 'sightingsRetentionDays', [0, 0.001, 0.5, 30, 3650, 3651]],
      ['sightings.max', 'sightingsMax', [0, 1, 100000, 10000000, 10000001, 2.5]],
      ['sightings.intervalSeconds', 'sightingsIntervalS', [-1, 0, 2.5, 86400, 86401]],
      ['audit.retentionDays', 'auditRetentionDays', [0, 1, 365, 36500, 36501, 1.5]],
    ];
    for (const [value, setting, samples] of cases) {
      const [group, key] = value.split('.');
      for (const sample of samples) {
        const chart = errorsOf(mergeValues(defaults, { [group]: { [key]: sample } })).length === 0;
        const server = (SETTINGS as Record<string, { schema: { safeParse(v: unknown): { success: boolean } } }>)[setting].schema.safeParse(
          String(sample),
        ).success;
        expect(chart, `${value}: ${sample}`).toBe(server);
      }
    }
  });

  it('accepts every persistence size the server accepts, and only Kubernetes quantities', () => {
    for (const size of ['1Gi', '500Mi', '2G', '1048576', '1.5Gi']) {
      expect(errorsOf(mergeValues(defaults, { persistence: { size } })), size).toEqual([]);
      expect(SETTINGS.persistenceSize.schema.safeParse(size).success, size).toBe(true);
    }
    expect(errorsOf(mergeValues(defaults, { persistence: { size: '10K' } })).length).toBeGreaterThan(0); // not k8s
  });
});

describe('the CloudNativePG example (an operator-managed PostgreSQL for several replicas)', () => {
  const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8');

  it('creates a Cluster whose app Secret (key uri) the values read DATABASE_URL from', () => {
    expect(manifestFiles).toEqual(['cloudnativepg-cluster.yaml']);
    const docs = YAML.parseAllDocuments(readFileSync(path.join(CHART, 'examples', 'cloudnativepg-cluster.yaml'), 'utf8')).map((d) =>
      d.toJS(),
    );
    const cluster = docs.find((d) => d?.kind === 'Cluster');
    expect(cluster.apiVersion).toBe('postgresql.cnpg.io/v1');
    expect(cluster.spec.instances).toBeGreaterThanOrEqual(3);
    expect(cluster.spec.bootstrap.initdb).toMatchObject({ database: 'lookout', owner: 'lookout' });
    const values = readYaml(path.join(CHART, 'examples', 'cloudnativepg.yaml'));
    // CloudNativePG writes the owner's credentials to <cluster>-app; its key `uri` is a postgresql:// URL.
    expect(values.database).toEqual({ existingSecret: `${cluster.metadata.name}-app`, existingSecretKey: 'uri' });
    expect(values.replicaCount).toBeGreaterThan(1);
  });

  it('is explained in the README, with the move of an existing volume and what stays per pod', () => {
    const section = readme.slice(readme.indexOf('## More than one replica'));
    expect(readme).toContain('## More than one replica');
    for (const needed of [
      'examples/cloudnativepg.yaml',
      'examples/cloudnativepg-cluster.yaml',
      'npm run data:to-postgres',
      'emptyDir',
      'PPE_DATASET_DIR',
      '/api/ready',
    ])
      expect(section, needed).toContain(needed);
    expect(section.slice(0, section.indexOf('\n## ', 3))).not.toMatch(/ReadWriteMany volume (is|are) needed/);
  });
});

describe('every server setting is reachable from a value', () => {
  const readme = readFileSync(path.join(CHART, 'README.md'), 'utf8');
  // README rows: | `VARIABLE` | set by | ... |
  const rows = new Map<string, string>();
  for (const line of readme.split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]*)` \|([^|]*)\|/.exec(line);
    if (m) rows.set(m[1], m[2].trim());
  }
  const all = [...Object.values(SETTINGS), ...Object.values(PROCESSOR_SETTINGS)].map((s) => s.env);
  // A secret the chart passes as a file only: the server reads <NAME>_FILE, which wins over <NAME>.
  const FILE_TWINS: Record<string, string> = { KAFKA_PASSWORD: 'KAFKA_PASSWORD_FILE' };

  /** Every variable an API or processor container gets, over all renders (defaults, examples, all switches on). */
  const seen = new Set<string>();
  const everything = renderChart({
    chat: { apiKey: 'k', token: 't', tokenSource: 'secret' },
    kafka: {
      brokers: 'k:9093',
      tls: { enabled: true, caConfigMap: 'ca' },
      sasl: { mechanism: 'scram-sha-512', username: 'u', password: 'p' },
    },
    mail: { transport: 'smtp', smtpUrl: 'smtp://u:p@mail:587' },
    processor: { enabled: true },
    ppe: { enabled: true, server: { enabled: true } },
    modelServer: { enabled: true },
  });
  for (const r of [...renders.map(([, x]) => x), everything]) {
    for (const [deployment, name] of [
      [find(r, 'Deployment', full('api')), 'api'],
      [find(r, 'Deployment', full('processor')), 'processor'],
    ] as const) {
      if (deployment) for (const key of Object.keys(containerEnv(r, container(deployment, name)).env)) seen.add(key);
    }
  }

  it.each(all)('%s', (name) => {
    const setBy = rows.get(name);
    expect(setBy, `${name} is missing from the README's table`).toBeTruthy();
    if (seen.has(name)) return;
    if (FILE_TWINS[name]) {
      expect(seen.has(FILE_TWINS[name]), `${FILE_TWINS[name]} is set`).toBe(true);
      return;
    }
    expect(setBy, `${name} is set by no template and the README does not say extraEnv`).toMatch(/extraEnv/);
    // And extraEnv really passes it to both the API server and the processor.
    const r = renderChart({ extraEnv: { [name]: 'x' }, processor: { enabled: true } });
    expect(containerEnv(r, container(get(r, 'Deployment', full('api')), 'api')).env[name]).toBe('x');
    expect(containerEnv(r, container(get(r, 'Deployment', full('processor')), 'processor')).env[name]).toBe('x');
  });

  it("names in the README's table only real settings and real values", () => {
    for (const [name, setBy] of rows) {
      expect(all, `README row ${name}`).toContain(name);
      for (const [, ref] of setBy.matchAll(/`([a-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*)`/g)) {
        const value = ref.split('.').reduce<any>((o, k) => (o && typeof o === 'object' ? o[k] : undefined), defaults);
        expect(value, `README row ${name} names ${ref}, which values.yaml lacks`).not.toBeUndefined();
      }
    }
  });
});

describe.each(renders)('rendered with %s', (name, r) => {
  const v = r.values;
  const api = get(r, 'Deployment', full('api'));
  const apiContainer = container(api, 'api');
  const { env: apiEnv, fromSecret } = containerEnv(r, apiContainer);

  it('renders documents Kubernetes can take: apiVersion, kind, a unique name', () => {
    const ids = r.docs.map((d) => `${d.kind}/${d.metadata?.name}`);
    for (const d of r.docs) {
      expect(d.apiVersion, ids.join()).toBeTruthy();
      expect(d.metadata?.name).toMatch(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('deploys the API: port 8080, /api/health liveness, /api/ready readiness, ClusterIP Service', () => {
    expect(api.spec.replicas).toBe(v.replicaCount);
    expect(apiContainer.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(apiContainer.livenessProbe.httpGet).toEqual({ path: '/api/health', port: 'http' });
    expect(apiContainer.readinessProbe.httpGet).toEqual({ path: '/api/ready', port: 'http' });
    expect(apiEnv).toMatchObject({ PORT: '8080', HOST: '0.0.0.0', DATA_DIR: '/data' });
    const service = get(r, 'Service', full('api'));
    expect(service.spec.type).toBe('ClusterIP');
    expect(service.spec.ports[0]).toMatchObject({ port: v.service.port, targetPort: 'http' });
    expect(api.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    expect(api.spec.selector.matchLabels).toEqual(service.spec.selector);
  });

  it('gives /data an emptyDir with a database (a cache), else a ReadWriteOnce PVC of persistence.size or an emptyDir', () => {
    const data = api.spec.template.spec.volumes.find((x: Obj) => x.name === 'data');
    expect(apiContainer.volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
    // The chart never asks for a volume the API pods share (#37): PostgreSQL is what they share.
    const apiClaims = r.docs.filter(
      (d) => d.kind === 'PersistentVolumeClaim' && d.metadata.labels['app.kubernetes.io/component'] === 'api',
    );
    for (const pvc of apiClaims) expect(pvc.spec.accessModes, pvc.metadata.name).not.toContain('ReadWriteMany');
    if (v.database.url || v.database.existingSecret) {
      expect(data).toEqual({ name: 'data', emptyDir: v.persistence.cacheSizeLimit ? { sizeLimit: v.persistence.cacheSizeLimit } : {} });
      expect(apiClaims).toEqual([]);
      expect(api.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
      expect(apiEnv).toMatchObject({ PERSISTENCE_ENABLED: 'true', DATA_DIR: '/data' }); // the server keeps its copy in the emptyDir
      return;
    }
    expect(v.replicaCount).toBeLessThanOrEqual(1);
    if (!v.persistence.enabled) {
      expect(data).toEqual({ name: 'data', emptyDir: {} });
      return;
    }
    expect(data.persistentVolumeClaim.claimName).toBe(full('data'));
    const pvc = get(r, 'PersistentVolumeClaim', full('data'));
    expect(pvc.spec.resources.requests.storage).toBe(v.persistence.size);
    expect(pvc.spec.accessModes).toEqual([v.persistence.accessMode]);
    expect(api.spec.strategy).toEqual({ type: 'Recreate' });
    expect(apiEnv).toMatchObject({ PERSISTENCE_ENABLED: 'true', PERSISTENCE_SIZE: v.persistence.size });
  });

  it('guards the API with a PodDisruptionBudget (maxUnavailable) when it runs more than one replica', () => {
    const pdb = find(r, 'PodDisruptionBudget', full('api'));
    if (!(v.podDisruptionBudget.enabled && v.replicaCount > 1)) {
      expect(pdb).toBeUndefined();
      return;
    }
    expect(pdb!.apiVersion).toBe('policy/v1');
    expect(pdb!.spec).toEqual({ maxUnavailable: v.podDisruptionBudget.maxUnavailable, selector: api.spec.selector });
  });

  it('maps the spec values to their variables', () => {
    expect(apiEnv).toMatchObject({
      RECOGNITION_MODEL: v.recognitionModel,
      REMOTE_DETECTOR_ENABLED: String(v.remoteDetector.enabled),
      REMOTE_DETECTOR_MODEL_NAME: v.remoteDetector.modelName,
      REMOTE_DETECTOR_CONFIDENCE_THRESHOLD: String(v.remoteDetector.confidenceThreshold),
      REMOTE_DETECTOR_DEFAULT_METHOD: v.remoteDetector.defaultMethod,
      CHAT_ENABLED: String(v.chat.enabled),
      CHAT_ENDPOINT: v.chat.endpoint,
      SIGHTINGS_ENABLED: String(v.sightings.enabled),
      SIGHTINGS_SOURCES: v.sightings.sources.join(','),
      SIGHTINGS_RETENTION_DAYS: String(v.sightings.retentionDays),
      SIGHTINGS_MAX: String(v.sightings.max),
      SIGHTINGS_INTERVAL_S: String(v.sightings.intervalSeconds),
      AUDIT_RETENTION_DAYS: String(v.audit.retentionDays),
    });
    for (const [key, value] of Object.entries(v.extraEnv ?? {})) expect(apiEnv[key]).toBe(value);
  });

  it("renders an environment the server's own settings parser accepts", () => {
    const settings = loadSettings(apiEnv, ROOT);
    expect(settings.recognitionModel).toBe(v.recognitionModel);
    expect(settings.remoteDetectorConfidenceThreshold).toBe(v.remoteDetector.confidenceThreshold);
    expect(settings.persistenceSize).toBe(v.persistence.size);
    expect(settings.kafkaSaslMechanism).toBe(v.kafka.sasl.mechanism);
    expect(settings.sightingsSources).toEqual(v.sightings.sources);
    expect(settings.sightingsRetentionDays).toBe(v.sightings.retentionDays);
    expect(settings.auditRetentionDays).toBe(v.audit.retentionDays);
    expect(settings.databaseUrl === '').toBe(!v.database.url && !v.database.existingSecret);
    const processor = find(r, 'Deployment', full('processor'));
    if (processor) {
      const ps = loadProcessorSettings(containerEnv(r, container(processor, 'processor')).env, ROOT);
      expect(ps.mailTransport).toBe(v.mail.transport);
      expect(ps.processorBackendUrl).toBe(`http://${full('api')}:${v.service.port}`);
    }
  });

  it('keeps secrets in Secrets: referenced by secretKeyRef or mounted, never inlined elsewhere', () => {
    const secretValues = [v.chat.apiKey, v.chat.token, v.kafka.sasl.password, v.mail.smtpUrl, v.database.url].filter(Boolean);
    const outside = JSON.stringify(r.docs.filter((d) => d.kind !== 'Secret'));
    for (const s of secretValues) expect(outside.includes(s), `a secret value outside a Secret`).toBe(false);
    for (const d of r.docs.filter((x) => x.kind === 'ConfigMap')) {
      expect(Object.keys(d.data)).not.toContain('CHAT_API_KEY');
      expect(Object.keys(d.data)).not.toContain('DATABASE_URL');
    }
    if (v.database.url || v.database.existingSecret) {
      expect(fromSecret.DATABASE_URL).toEqual({
        name: v.database.existingSecret || full('database'),
        key: v.database.existingSecret ? v.database.existingSecretKey : 'url',
      });
    } else {
      expect(fromSecret.DATABASE_URL).toBeUndefined();
      expect(v.replicaCount).toBeLessThanOrEqual(1);
    }
    expect(apiEnv.KAFKA_PASSWORD).toBeUndefined();
    if (v.chat.apiKey || v.chat.existingSecret) {
      const chatSecret = v.chat.existingSecret || full('chat');
      expect(fromSecret.CHAT_API_KEY).toMatchObject({ name: chatSecret, key: 'api-key' });
      if (!v.chat.existingSecret) expect(get(r, 'Secret', chatSecret).stringData['api-key']).toBe(v.chat.apiKey);
    } else {
      expect(fromSecret.CHAT_API_KEY).toBeUndefined();
    }
  });

  it('connects to Kafka over TLS with the CA mounted, and SCRAM with the password from a mounted Secret', () => {
    const pods = [api, find(r, 'Deployment', full('processor'))].filter(Boolean) as Obj[];
    for (const pod of pods) {
      const c = pod.spec.template.spec.containers[0];
      const { env } = containerEnv(r, c);
      expect(env.KAFKA_BROKERS).toBe(v.kafka.brokers);
      expect(env.KAFKA_SSL).toBe(String(v.kafka.tls.enabled));
      const volumes = pod.spec.template.spec.volumes as Obj[];
      const mountOf = (file: string) => c.volumeMounts.find((m: Obj) => m.mountPath === path.posix.dirname(file));
      if (v.kafka.tls.caSecret || v.kafka.tls.caConfigMap) {
        const mount = mountOf(env.KAFKA_SSL_CA_FILE);
        expect(mount, 'the CA file is mounted').toBeTruthy();
        const volume = volumes.find((x) => x.name === mount.name)!;
        const source = volume.secret ?? volume.configMap;
        expect(volume.secret?.secretName ?? volume.configMap?.name).toBe(v.kafka.tls.caSecret || v.kafka.tls.caConfigMap);
        expect(source.items).toEqual([{ key: v.kafka.tls.caKey, path: path.posix.basename(env.KAFKA_SSL_CA_FILE) }]);
      } else {
        expect(env.KAFKA_SSL_CA_FILE).toBeUndefined();
      }
      if (v.kafka.sasl.mechanism) {
        expect(env).toMatchObject({ KAFKA_SASL_MECHANISM: v.kafka.sasl.mechanism, KAFKA_USERNAME: v.kafka.sasl.username });
        const mount = mountOf(env.KAFKA_PASSWORD_FILE);
        expect(mount, 'the password file is mounted').toBeTruthy();
        const volume = volumes.find((x) => x.name === mount.name)!;
        expect(volume.secret.secretName).toBe(v.kafka.sasl.existingSecret || full('kafka'));
        expect(volume.secret.items).toEqual([
          { key: v.kafka.sasl.existingSecret ? v.kafka.sasl.existingSecretKey : 'password', path: 'password' },
        ]);
      }
    }
  });

  it('deploys the processor when enabled: port, /health and /ready, its own state volume, the API as backend', () => {
    const processor = find(r, 'Deployment', full('processor'));
    if (!v.processor.enabled) {
      expect(processor).toBeUndefined();
      expect(apiEnv.PROCESSOR_URL).toBeUndefined();
      return;
    }
    const c = container(processor!, 'processor');
    expect(c.command).toEqual(['node', 'dist/server/processor/main.js']);
    expect(c.ports[0].containerPort).toBe(v.processor.port);
    expect(c.livenessProbe.httpGet.path).toBe('/health');
    expect(c.readinessProbe.httpGet.path).toBe('/ready');
    expect(processor!.spec.replicas).toBe(v.processor.replicaCount);
    const service = get(r, 'Service', full('processor'));
    expect(service.spec.type).toBe('ClusterIP');
    expect(apiEnv.PROCESSOR_URL).toBe(`http://${full('processor')}:${service.spec.ports[0].port}`);
    const pvc = get(r, 'PersistentVolumeClaim', full('processor-state'));
    expect(pvc.spec.accessModes).toEqual([v.processor.replicaCount > 1 ? 'ReadWriteMany' : 'ReadWriteOnce']);
    expect(c.resources).toEqual(v.processor.resources);
    const { env, fromSecret: secretRefs } = containerEnv(r, c);
    if (v.mail.transport === 'smtp') expect(secretRefs.MAIL_SMTP_URL).toMatchObject({ key: 'smtp-url' });
    for (const [key, value] of Object.entries(v.processor.extraEnv ?? {})) expect(env[key]).toBe(value);
  });

  it('deploys the PPE detector when enabled, as a ClusterIP Service that PPE_ENDPOINT names', () => {
    const ppe = find(r, 'Deployment', full('ppe'));
    expect(apiEnv.PPE_ENABLED).toBe(String(v.ppe.enabled));
    if (!v.ppe.server.enabled) {
      expect(ppe).toBeUndefined();
      expect(apiEnv.PPE_ENDPOINT).toBe(v.ppe.endpoint);
      return;
    }
    const c = container(ppe!, 'ppe-detector');
    expect(c.command).toEqual(['node', 'dist/server/ppe-server/main.js']);
    expect(Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value]))).toMatchObject({
      PORT: String(v.ppe.server.port),
      HOST: '0.0.0.0',
      PPE_MODEL_PATH: v.ppe.server.modelPath,
    });
    expect(c.readinessProbe.httpGet.path).toBe('/v2/health/ready');
    expect(c.resources).toEqual(v.ppe.server.resources);
    const service = get(r, 'Service', full('ppe'));
    expect(service.spec.type).toBe('ClusterIP');
    expect(apiEnv.PPE_ENDPOINT).toBe(v.ppe.endpoint || `http://${full('ppe')}:${service.spec.ports[0].port}`);
  });

  it('points REMOTE_DETECTOR_URL at remoteDetector.url, else at the model server it deploys (ClusterIP)', () => {
    const kserve = v.modelServing.enabled && !v.remoteDetector.url;
    const nodeServer = v.modelServer.enabled && !v.remoteDetector.url && !v.modelServing.enabled;
    expect(Boolean(find(r, 'InferenceService', full('detector')))).toBe(kserve);
    expect(Boolean(find(r, 'Deployment', full('model-server')))).toBe(nodeServer);
    if (v.remoteDetector.url) expect(apiEnv.REMOTE_DETECTOR_URL).toBe(v.remoteDetector.url);
    else if (kserve) expect(apiEnv.REMOTE_DETECTOR_URL).toBe(`http://${full('detector')}-predictor.${NAMESPACE}.svc.cluster.local`);
    else if (nodeServer) {
      const service = get(r, 'Service', full('model-server'));
      expect(service.spec.type).toBe('ClusterIP');
      expect(apiEnv.REMOTE_DETECTOR_URL).toBe(`http://${full('model-server')}:${service.spec.ports[0].port}`);
      const c = container(get(r, 'Deployment', full('model-server')), 'model-server');
      expect(c.command).toEqual(['node', 'dist/server/model-server/main.js']);
      expect(c.env).toContainEqual({ name: 'MODEL_NAME', value: v.remoteDetector.modelName });
      expect(c.readinessProbe.httpGet.path).toBe('/v2/health/ready');
    } else expect(apiEnv.REMOTE_DETECTOR_URL).toBe('');
  });

  it('exposes only the API: an Ingress (when enabled) to the API Service, no Service but ClusterIP', () => {
    for (const s of r.docs.filter((d) => d.kind === 'Service')) expect(s.spec.type, s.metadata.name).toBe('ClusterIP');
    expect(r.docs.filter((d) => d.kind === 'Route')).toEqual([]);
    const ingresses = r.docs.filter((d) => d.kind === 'Ingress');
    expect(ingresses.length).toBe(v.ingress.enabled ? 1 : 0);
    for (const ing of ingresses) {
      const backends = ing.spec.rules.flatMap((rule: Obj) => rule.http.paths.map((p: Obj) => p.backend.service.name));
      expect(backends).toEqual([full('api')]);
      expect(ing.spec.rules[0].host).toBe(v.ingress.host);
      if (v.ingress.tlsSecret) expect(ing.spec.tls).toEqual([{ hosts: [v.ingress.host], secretName: v.ingress.tlsSecret }]);
    }
  });

  it('sets the resources of each component from its value', () => {
    expect(apiContainer.resources).toEqual(v.resources);
  });

  it('writes the biometric and auth values into the identity ConfigMap, not the server environment', () => {
    const identity = get(r, 'ConfigMap', full('identity'));
    expect(identity.data).toMatchObject({
      BIOMETRIC_CONFIDENCE_THRESHOLD: String(v.biometric.confidenceThreshold),
      BIOMETRIC_MAX_ENROLLMENT_IMAGES: String(v.biometric.maxEnrollmentImages),
      BIOMETRIC_WEBCAM_WIDTH: String(v.biometric.webcamWidth),
      BIOMETRIC_WEBCAM_HEIGHT: String(v.biometric.webcamHeight),
      AUTH_REALM: v.auth.realm,
      AUTH_CLIENT_ID: v.auth.clientId,
    });
    expect(Object.keys(apiEnv).filter((k) => k.startsWith('BIOMETRIC_'))).toEqual([]);
  });

  it(`matches what ${name} is for`, () => {
    const kinds = r.docs.map((d) => d.kind).sort();
    if (name === 'defaults') {
      expect(kinds).toEqual(['ConfigMap', 'ConfigMap', 'Deployment', 'PersistentVolumeClaim', 'Service']);
      expect(get(r, 'PersistentVolumeClaim', full('data')).spec.resources.requests.storage).toBe('1Gi');
      expect(api.spec.strategy).toEqual({ type: 'Recreate' });
    }
    if (name === 'kiosk.yaml') {
      expect(r.docs.filter((d) => d.kind === 'Deployment').map((d) => d.metadata.name)).toEqual([full('api')]);
      expect(get(r, 'PersistentVolumeClaim', full('data')).spec.accessModes).toEqual(['ReadWriteOnce']);
    }
    if (name === 'cluster.yaml') {
      expect(find(r, 'PersistentVolumeClaim', full('data'))).toBeUndefined(); // three replicas, each its own emptyDir
      expect(api.spec.strategy.type).toBe('RollingUpdate');
      expect(get(r, 'PodDisruptionBudget', full('api')).spec.maxUnavailable).toBe(1);
      expect(
        r.docs
          .filter((d) => d.kind === 'Deployment')
          .map((d) => d.metadata.name)
          .sort(),
      ).toEqual([full('api'), full('model-server'), full('ppe'), full('processor')].sort());
      expect(apiEnv).toMatchObject({ KAFKA_SSL: 'true', KAFKA_SASL_MECHANISM: 'scram-sha-512' });
      expect(find(r, 'Secret', full('kafka'))).toBeUndefined(); // the existing KafkaUser Secret is used
      expect(fromSecret.DATABASE_URL).toEqual({ name: 'vision-pg-app', key: 'uri' }); // CloudNativePG's app Secret
      expect(find(r, 'Secret', full('database'))).toBeUndefined();
      expect(apiEnv.SIGHTINGS_SOURCES).toBe('api,camera,verify');
    }
    if (name === 'cloudnativepg.yaml') {
      // Three replicas on an operator-managed PostgreSQL: its app Secret, key uri; no volume beyond the emptyDirs.
      expect(api.spec.replicas).toBe(3);
      expect(fromSecret.DATABASE_URL).toEqual({ name: v.database.existingSecret, key: 'uri' });
      expect(r.docs.filter((d) => d.kind === 'PersistentVolumeClaim')).toEqual([]);
      expect(find(r, 'PodDisruptionBudget', full('api'))).toBeTruthy();
    }
    if (name === 'model-serving.yaml') {
      const ms = v.modelServing;
      const pvc = get(r, 'PersistentVolumeClaim', full('models'));
      expect(pvc.spec.resources.requests.storage).toBe('2Gi');
      expect(JSON.parse(get(r, 'Secret', ms.storageConfigSecret).stringData[full('models')])).toEqual({
        type: 'pvc',
        name: full('models'),
      });
      const job = get(r, 'Job', full('model-download'));
      const jobEnv = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: Obj) => [e.name, e.value]));
      expect(jobEnv).toEqual({ MODEL_NAME: v.remoteDetector.modelName, BASE_URL: ms.download.baseUrl });
      expect(job.spec.template.spec.volumes[0].persistentVolumeClaim.claimName).toBe(full('models'));
      const runtime = get(r, 'ServingRuntime', full('ovms'));
      expect(runtime.apiVersion).toBe('serving.kserve.io/v1alpha1');
      expect(runtime.spec.containers[0].image).toMatch(/openvino\/model_server:/);
      expect(runtime.spec.containers[0].args).toContain(`--model_name=${v.remoteDetector.modelName}`);
      const isvc = get(r, 'InferenceService', full('detector'));
      expect(isvc.apiVersion).toBe('serving.kserve.io/v1beta1');
      expect(isvc.spec.predictor.model).toMatchObject({
        runtime: full('ovms'),
        storageUri: `pvc://${full('models')}/${v.remoteDetector.modelName}`,
      });
      const init = api.spec.template.spec.initContainers;
      expect(init.map((c: Obj) => c.name)).toEqual(['wait-for-model']);
      expect(init[0].args[0]).toContain('$REMOTE_DETECTOR_URL/v2/models/$REMOTE_DETECTOR_MODEL_NAME/ready');
      expect(init[0].envFrom).toEqual([{ configMapRef: { name: full('config') } }]);
      expect(apiEnv.CHAT_TOKEN_FILE).toBe('/var/run/secrets/kubernetes.io/serviceaccount/token');
      expect(api.spec.template.spec.automountServiceAccountToken).toBe(true);
    } else {
      expect(api.spec.template.spec.initContainers).toBeUndefined();
    }
  });
});

describe('switches rendered beyond the examples', () => {
  it('deploys no model server when remoteDetector.url is set, whatever else is on', () => {
    const r = renderChart({
      remoteDetector: { url: 'http://ovms.models.svc:8888' },
      modelServing: { enabled: true },
      modelServer: { enabled: true },
    });
    expect(r.docs.filter((d) => ['InferenceService', 'ServingRuntime', 'Job'].includes(d.kind) || /model/.test(d.metadata.name))).toEqual(
      [],
    );
    const api = get(r, 'Deployment', full('api'));
    expect(containerEnv(r, container(api, 'api')).env.REMOTE_DETECTOR_URL).toBe('http://ovms.models.svc:8888');
    expect(api.spec.template.spec.initContainers).toBeUndefined();
  });

  it('runs without a volume when persistence is off', () => {
    const r = renderChart({ persistence: { enabled: false } });
    expect(r.docs.filter((d) => d.kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(containerEnv(r, container(get(r, 'Deployment', full('api')), 'api')).env.PERSISTENCE_ENABLED).toBe('false');
  });

  it('mounts the chat token from the Secret and uses an existing claim when told to', () => {
    const r = renderChart({ chat: { token: 'tok' }, persistence: { existingClaim: 'old-data' } });
    const api = get(r, 'Deployment', full('api'));
    const c = container(api, 'api');
    expect(containerEnv(r, c).env.CHAT_TOKEN_FILE).toBe('/etc/lookout/chat/token');
    expect(c.volumeMounts).toContainEqual({ name: 'chat-token', mountPath: '/etc/lookout/chat', readOnly: true });
    expect(get(r, 'Secret', full('chat')).stringData).toEqual({ token: 'tok' });
    expect(api.spec.template.spec.volumes.find((x: Obj) => x.name === 'data').persistentVolumeClaim.claimName).toBe('old-data');
    expect(find(r, 'PersistentVolumeClaim', full('data'))).toBeUndefined();
  });

  it('prints large integers as integers (Helm would print 3.6e+06 without `int`)', () => {
    const r = renderChart({ processor: { enabled: true, pollIntervalMs: 3600000 } });
    expect(get(r, 'ConfigMap', full('processor-config')).data.PROCESSOR_POLL_INTERVAL_MS).toBe('3600000');
  });

  it('stores database.url in the <release>-database Secret, read through secretKeyRef, never in a ConfigMap', () => {
    const url = 'postgres://lookout:s3cr3t-pw@pg.db.svc:5432/lookout';
    const r = renderChart({ database: { url }, processor: { enabled: true } });
    expect(get(r, 'Secret', full('database'))).toMatchObject({ type: 'Opaque', stringData: { url } });
    const apiC = container(get(r, 'Deployment', full('api')), 'api');
    expect(apiC.env).toContainEqual({ name: 'DATABASE_URL', valueFrom: { secretKeyRef: { name: full('database'), key: 'url' } } });
    const outside = r.docs.filter((d) => d.kind !== 'Secret');
    expect(JSON.stringify(outside)).not.toContain('s3cr3t-pw');
    for (const d of r.docs.filter((x) => x.kind === 'ConfigMap')) expect(d.data.DATABASE_URL, d.metadata.name).toBeUndefined();
    // The processor keeps no rows: it gets no DATABASE_URL.
    const processorEnv = containerEnv(r, container(get(r, 'Deployment', full('processor')), 'processor'));
    expect(processorEnv.fromSecret.DATABASE_URL).toBeUndefined();
    expect(loadSettings(containerEnv(r, apiC).env, ROOT).databaseUrl).toMatch(/^postgres:\/\//);
  });

  it('reads DATABASE_URL from database.existingSecret (its key), which wins over database.url', () => {
    const r = renderChart({ database: { url: 'postgres://u:ignored-pw@pg/lookout', existingSecret: 'pg-app', existingSecretKey: 'uri' } });
    expect(find(r, 'Secret', full('database'))).toBeUndefined();
    expect(JSON.stringify(r.docs)).not.toContain('ignored-pw');
    const { fromSecret } = containerEnv(r, container(get(r, 'Deployment', full('api')), 'api'));
    expect(fromSecret.DATABASE_URL).toEqual({ name: 'pg-app', key: 'uri' });
    const plain = renderChart({ database: { existingSecret: 'pg-app' } });
    expect(containerEnv(plain, container(get(plain, 'Deployment', full('api')), 'api')).fromSecret.DATABASE_URL).toEqual({
      name: 'pg-app',
      key: 'url',
    });
  });

  it('refuses replicaCount > 1 without a database, in words (the schema refuses it too)', () => {
    for (const replicaCount of [2, 3])
      for (const persistence of [{}, { enabled: false }])
        expect(() => renderChart({ replicaCount, persistence })).toThrow(
          /api-deployment\.yaml: execution error: replicaCount > 1 needs a PostgreSQL server: set database\.url or database\.existingSecret/,
        );
    for (const database of [{ url: 'postgres://u:p@pg/lookout' }, { existingSecret: 'pg-app' }]) {
      const r = renderChart({ replicaCount: 2, database });
      const api = get(r, 'Deployment', full('api'));
      expect(api.spec.replicas).toBe(2);
      expect(api.spec.strategy.type).toBe('RollingUpdate');
      expect(find(r, 'PersistentVolumeClaim', full('data'))).toBeUndefined();
    }
    // One replica keeps the embedded database; Recreate lets the old pod close it before the new one opens it.
    const one = renderChart();
    const api = get(one, 'Deployment', full('api'));
    expect(api.spec.strategy).toEqual({ type: 'Recreate' });
    expect(containerEnv(one, container(api, 'api')).env.DATABASE_URL).toBeUndefined();
  });

  it('runs three replicas on a database with no ReadWriteMany claim and no API volume at all (#37)', () => {
    for (const database of [{ url: 'postgres://u:p@pg/lookout' }, { existingSecret: 'pg-app', existingSecretKey: 'uri' }]) {
      // Even with the values that used to ask for a shared volume: persistence.* is for the embedded database.
      const r = renderChart({ replicaCount: 3, database, persistence: { accessMode: 'ReadWriteMany', storageClass: 'nfs-client' } });
      expect(r.docs.filter((d) => d.kind === 'PersistentVolumeClaim')).toEqual([]);
      expect(JSON.stringify(r.docs)).not.toContain('ReadWriteMany');
      const api = get(r, 'Deployment', full('api'));
      expect(api.spec.replicas).toBe(3);
      expect(api.spec.template.spec.volumes.find((x: Obj) => x.name === 'data')).toEqual({ name: 'data', emptyDir: {} });
      expect(api.spec.strategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
      // Readiness follows the database: /api/ready answers 503 (shared_state unreachable) when the copy cannot follow it.
      expect(container(api, 'api').readinessProbe.httpGet).toEqual({ path: '/api/ready', port: 'http' });
    }
    // An existing claim is not mounted either: the replicas' copies are made whole from PostgreSQL.
    const claim = renderChart({ replicaCount: 3, database: { existingSecret: 'pg-app' }, persistence: { existingClaim: 'old-data' } });
    expect(JSON.stringify(claim.docs)).not.toContain('old-data');
  });

  it('bounds the cache with persistence.cacheSizeLimit, and one replica on a database uses the emptyDir too', () => {
    const r = renderChart({ database: { existingSecret: 'pg-app' }, persistence: { cacheSizeLimit: '20Gi' } });
    const api = get(r, 'Deployment', full('api'));
    expect(api.spec.replicas).toBe(1);
    expect(api.spec.template.spec.volumes.find((x: Obj) => x.name === 'data')).toEqual({ name: 'data', emptyDir: { sizeLimit: '20Gi' } });
    expect(r.docs.filter((d) => d.kind === 'PersistentVolumeClaim')).toEqual([]);
    expect(find(r, 'PodDisruptionBudget', full('api'))).toBeUndefined(); // one replica: nothing to keep up during a drain
    // Switched off, persistence still gives a cache in /data (not a temporary folder in the container's layer).
    const off = renderChart({ database: { existingSecret: 'pg-app' }, persistence: { enabled: false } });
    expect(containerEnv(off, container(get(off, 'Deployment', full('api')), 'api')).env.PERSISTENCE_ENABLED).toBe('true');
  });

  it('keeps the embedded database on one ReadWriteOnce claim that Helm keeps when it is no longer rendered', () => {
    const r = renderChart();
    const pvc = get(r, 'PersistentVolumeClaim', full('data'));
    expect(pvc.spec.accessModes).toEqual(['ReadWriteOnce']);
    // Switching to a database (or uninstalling) leaves the data for `npm run data:to-postgres`, not deleted by Helm.
    expect(pvc.metadata.annotations).toEqual({ 'helm.sh/resource-policy': 'keep' });
  });

  it('renders the PodDisruptionBudget only with more than one replica, unless podDisruptionBudget.enabled is false', () => {
    const database = { existingSecret: 'pg-app' };
    const pdbOf = (values: Obj) => find(renderChart({ database, ...values }), 'PodDisruptionBudget', full('api'));
    expect(pdbOf({ replicaCount: 1 })).toBeUndefined();
    expect(pdbOf({ replicaCount: 0 })).toBeUndefined();
    expect(pdbOf({ replicaCount: 2 })!.spec).toEqual({
      maxUnavailable: 1,
      selector: {
        matchLabels: { 'app.kubernetes.io/name': 'lookout', 'app.kubernetes.io/instance': RELEASE, 'app.kubernetes.io/component': 'api' },
      },
    });
    expect(pdbOf({ replicaCount: 3, podDisruptionBudget: { maxUnavailable: '50%' } })!.spec.maxUnavailable).toBe('50%');
    expect(pdbOf({ replicaCount: 3, podDisruptionBudget: { enabled: false } })).toBeUndefined();
    expect(find(renderChart(), 'PodDisruptionBudget', full('api'))).toBeUndefined(); // the defaults: one replica
  });

  it('renders the sightings and audit values into <release>-config, as the server parses them', () => {
    const defaultsEnv = get(renderChart(), 'ConfigMap', full('config')).data;
    for (const key of [
      'sightingsEnabled',
      'sightingsSources',
      'sightingsRetentionDays',
      'sightingsMax',
      'sightingsIntervalS',
      'auditRetentionDays',
    ] as const)
      expect(defaultsEnv[SETTINGS[key].env], `${SETTINGS[key].env}: the server's default`).toBe(SETTINGS[key].default);
    const r = renderChart({
      sightings: { enabled: false, sources: ['camera', 'verify'], retentionDays: 0.5, max: 2000000, intervalSeconds: 2.5 },
      audit: { retentionDays: 90 },
    });
    const data = get(r, 'ConfigMap', full('config')).data;
    expect(data).toMatchObject({
      SIGHTINGS_ENABLED: 'false',
      SIGHTINGS_SOURCES: 'camera,verify',
      SIGHTINGS_RETENTION_DAYS: '0.5',
      SIGHTINGS_MAX: '2000000', // not 2e+06
      SIGHTINGS_INTERVAL_S: '2.5',
      AUDIT_RETENTION_DAYS: '90',
    });
    const settings = loadSettings(containerEnv(r, container(get(r, 'Deployment', full('api')), 'api')).env, ROOT);
    expect(settings).toMatchObject({
      sightingsEnabled: false,
      sightingsSources: ['camera', 'verify'],
      sightingsRetentionDays: 0.5,
      sightingsMax: 2000000,
      sightingsIntervalS: 2.5,
      auditRetentionDays: 90,
    });
    const none = renderChart({ sightings: { sources: [] } });
    const noneEnv = containerEnv(none, container(get(none, 'Deployment', full('api')), 'api')).env;
    expect(noneEnv.SIGHTINGS_SOURCES).toBe('');
    expect(loadSettings(noneEnv, ROOT).sightingsSources).toEqual([]);
  });

  it("accepts the original service's names by default (issue #35): its backend's Service name and its frontend's page", () => {
    // The original's Keycloak extension calls http://neuroface-backend:8080/api and its frontend's nginx proxies to
    // that name; its compose published the frontend on http://localhost:4200 (test/deploy/original-names.test.ts).
    const hostsOf = (r: Rendered) => containerEnv(r, container(get(r, 'Deployment', full('api')), 'api')).env;
    const env = hostsOf(renderChart());
    const hosts = env.ALLOWED_HOSTS.split(',');
    expect(hosts).toEqual(
      expect.arrayContaining([
        full('api'),
        'neuroface-backend',
        `neuroface-backend.${NAMESPACE}`,
        `neuroface-backend.${NAMESPACE}.svc.cluster.local`,
      ]),
    );
    expect(env.ALLOWED_ORIGINS.split(',')).toEqual(expect.arrayContaining(['http://localhost:4200', 'http://127.0.0.1:4200']));
    const settings = loadSettings(env, ROOT);
    expect(settings.allowedHosts).toContain('neuroface-backend');
    expect(settings.allowedOrigins).toContain('http://localhost:4200');
    // The site's own origins come after them; switched off, only the chart's own names and the site's remain.
    const own = hostsOf(renderChart({ security: { allowedOrigins: ['https://portal.example.org'] } }));
    expect(own.ALLOWED_ORIGINS.split(',')).toEqual(['http://localhost:4200', 'http://127.0.0.1:4200', 'https://portal.example.org']);
    const off = hostsOf(renderChart({ security: { originalNames: false, allowedOrigins: ['https://portal.example.org'] } }));
    expect(off.ALLOWED_HOSTS).not.toContain('neuroface-backend');
    expect(off.ALLOWED_ORIGINS).toBe('https://portal.example.org');
  });

  it('leaves nothing of the chart unrendered ({{ in the output would be a template the renderer skipped)', () => {
    for (const [, r] of renders) for (const [file, text] of Object.entries(r.files)) expect(text, file).not.toContain('{{');
  });
});
