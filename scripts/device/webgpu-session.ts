/**
 * #29: how long onnxruntime-web takes to create NanoDet's WebGPU session, and its first run, for each session
 * option, on a real GPU. The setup that measured 29.7 s (WASM: 0.27 s): Node with Dawn, the WebGPU engine
 * Chrome uses (the `webgpu` npm package), and onnxruntime-web's WebGPU build, on the graph the app converts
 * (shared/objects/nanodet-onnx.ts, from public/models/nanodet.json).
 *
 * Each option runs in a process of its own: onnxruntime keeps one WebGPU device and its compiled pipelines per
 * process, so a second session in the same process would find them compiled (that second session is measured
 * too: it is what "never twice" saves). Pipeline compilation is timed by wrapping GPUDevice's
 * createComputePipeline(Async) and createShaderModule: their total against the session's creation says whether
 * shader compilation is where the time goes. One verbose-log run counts nodes onnxruntime puts on the CPU
 * (an op falling back costs a GPU-CPU round trip per frame).
 *
 * Prepared here by scripts/device/prepare-webgpu-session.sh (bundle, Dawn, onnxruntime-web's WASM), run there
 * in one call (scripts/device/README.md). Checked here without a GPU: the WASM variant runs and each WebGPU
 * variant reports "Failed to get GPU adapter" (Dawn refuses Mesa's software Vulkan, lavapipe, for missing features).
 *
 *   node webgpu-session.mjs                 every variant, each in a child process; a table, and JSON in $OUT
 *   node webgpu-session.mjs --variant NAME  one variant, its JSON on stdout (what the parent runs)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { nanoDetToOnnx, type TfjsGraphArtifacts, type TfjsWeightSpec } from '../../shared/objects/nanodet-onnx.js';
import { WEBGPU_SESSION_OPTIONS } from '../../client/src/engine/webgpu-options.js';

type Ort = typeof import('onnxruntime-web');
type SessionOptions = import('onnxruntime-web').InferenceSession.SessionOptions;

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The repository root: the bundle sits in <root>/.device-webgpu/, this file in <root>/scripts/device/. */
const ROOT = process.env.LOOKOUT_ROOT ?? path.resolve(HERE, '..');

interface Variant {
  name: string;
  why: string;
  options: SessionOptions;
  verbose?: boolean;
}

const webgpu = (extra: Record<string, unknown> = {}) => [{ name: 'webgpu', ...extra }] as SessionOptions['executionProviders'];

export const VARIANTS: Variant[] = [
  { name: 'wasm', why: 'the WASM provider, for reference', options: { executionProviders: ['wasm'], graphOptimizationLevel: 'all' } },
  {
    name: 'before',
    why: "the app's options before #29 (webgpu, all)",
    options: { executionProviders: ['webgpu'], graphOptimizationLevel: 'all' },
  },
  {
    name: 'chosen',
    why: "the app's options now (client/src/engine/webgpu-options.ts)",
    options: { ...WEBGPU_SESSION_OPTIONS, executionProviders: [...WEBGPU_SESSION_OPTIONS.executionProviders] } as SessionOptions,
  },
  {
    name: 'opt-disabled',
    why: 'no graph optimisation (no fusion)',
    options: { executionProviders: webgpu(), graphOptimizationLevel: 'disabled' },
  },
  { name: 'opt-basic', why: 'basic graph optimisation', options: { executionProviders: webgpu(), graphOptimizationLevel: 'basic' } },
  {
    name: 'opt-extended',
    why: 'extended graph optimisation',
    options: { executionProviders: webgpu(), graphOptimizationLevel: 'extended' },
  },
  { name: 'nhwc', why: 'NHWC layout', options: { executionProviders: webgpu({ preferredLayout: 'NHWC' }), graphOptimizationLevel: 'all' } },
  {
    name: 'validation-disabled',
    why: 'no validation at all',
    options: { executionProviders: webgpu({ validationMode: 'disabled' }), graphOptimizationLevel: 'all' },
  },
  {
    name: 'graph-capture',
    why: 'graph capture (replays the recorded dispatches; needs GPU-resident inputs, may refuse)',
    options: { executionProviders: webgpu(), graphOptimizationLevel: 'all', enableGraphCapture: true },
  },
  {
    name: 'verbose',
    why: 'the chosen options with the verbose log (CPU fallbacks)',
    options: { executionProviders: webgpu(), graphOptimizationLevel: 'all' },
    verbose: true,
  },
];

interface Figures {
  variant: string;
  ok: boolean;
  error?: string;
  adapter?: string;
  /** Dawn's and onnxruntime's start: the WASM runtime and the WebGPU device (the first session pays it). */
  createMs?: number;
  firstRunMs?: number;
  /** Median of the steady runs after the first. */
  runMs?: number;
  /** A second session in the same process, and its first run. */
  secondCreateMs?: number;
  secondFirstRunMs?: number;
  pipelines?: { count: number; totalMs: number; shaderModules: number; shaderMs: number };
  cpuFallbackLines?: string[];
  outputs?: number[][];
}

function fetchGraph(): TfjsGraphArtifacts {
  const jsonPath = path.join(ROOT, 'public/models/nanodet.json');
  const json = JSON.parse(fs.readFileSync(jsonPath, 'utf8')) as {
    modelTopology: unknown;
    signature?: unknown;
    weightsManifest: { paths: string[]; weights: TfjsWeightSpec[] }[];
  };
  const parts = json.weightsManifest.flatMap((g) => g.paths).map((p) => fs.readFileSync(path.join(path.dirname(jsonPath), p)));
  return {
    modelTopology: json.modelTopology,
    signature: json.signature,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: new Uint8Array(Buffer.concat(parts)),
  };
}

/** Dawn as the page's navigator.gpu, with pipeline and shader compilation timed. */
function installDawn(figures: Figures): void {
  const require = createRequire(import.meta.url);
  const dawn = require(path.join(HERE, 'dawn.node')) as { create(flags: string[]): unknown; globals: Record<string, unknown> };
  Object.assign(globalThis, dawn.globals);
  const gpu = dawn.create([]);
  Object.defineProperty(globalThis, 'navigator', { value: { gpu, hardwareConcurrency: 1, userAgent: 'node' }, configurable: true });
  const pipelines = { count: 0, totalMs: 0, shaderModules: 0, shaderMs: 0 };
  figures.pipelines = pipelines;
  const proto = (dawn.globals.GPUDevice as { prototype: Record<string, (...a: unknown[]) => unknown> }).prototype;
  const timed = (name: string, onDone: (ms: number) => void) => {
    const original = proto[name];
    if (!original) return;
    proto[name] = function (this: unknown, ...args: unknown[]) {
      const t0 = performance.now();
      const result = original.apply(this, args);
      if (result instanceof Promise) return result.finally(() => onDone(performance.now() - t0));
      onDone(performance.now() - t0);
      return result;
    };
  };
  const pipeline = (ms: number) => {
    pipelines.count++;
    pipelines.totalMs += ms;
  };
  timed('createComputePipeline', pipeline);
  timed('createComputePipelineAsync', pipeline);
  timed('createShaderModule', (ms) => {
    pipelines.shaderModules++;
    pipelines.shaderMs += ms;
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function runVariant(variant: Variant): Promise<Figures> {
  const figures: Figures = { variant: variant.name, ok: false };
  const logLines: string[] = [];
  try {
    if (variant.name !== 'wasm') installDawn(figures);
    const ort = (await import('onnxruntime-web/webgpu')) as unknown as Ort;
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.wasmBinary = fs.readFileSync(path.join(HERE, 'ort-wasm-simd-threaded.asyncify.wasm'));
    if (variant.verbose) {
      ort.env.logLevel = 'verbose';
      for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
        console[level] = (...args: unknown[]) => logLines.push(args.map(String).join(' '));
      }
    }
    const onnx = nanoDetToOnnx(fetchGraph());
    const input = new Float32Array(onnx.input.shape.reduce((a, b) => a * b, 1)).map((_, i) => ((i * 7919) % 255) / 255 - 0.5);
    const feeds = () => ({ [onnx.input.name]: new ort.Tensor('float32', input, onnx.input.shape) });

    const measure = async () => {
      const t0 = performance.now();
      const session = await ort.InferenceSession.create(onnx.bytes, variant.options);
      const t1 = performance.now();
      const out = await session.run(feeds());
      const t2 = performance.now();
      return { session, createMs: t1 - t0, firstRunMs: t2 - t1, out };
    };
    const first = await measure();
    figures.createMs = first.createMs;
    figures.firstRunMs = first.firstRunMs;
    // A few numbers of each output, to check every variant computes the same thing.
    figures.outputs = Object.values(first.out).map((t) => Array.from((t.data as Float32Array).slice(0, 4)));
    const runs: number[] = [];
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now();
      await first.session.run(feeds());
      runs.push(performance.now() - t0);
    }
    figures.runMs = median(runs);
    const second = await measure();
    figures.secondCreateMs = second.createMs;
    figures.secondFirstRunMs = second.firstRunMs;
    const device = variant.name === 'wasm' ? null : await ort.env.webgpu.device;
    const info = (device as { adapterInfo?: { vendor?: string; architecture?: string; description?: string } } | null)?.adapterInfo;
    if (info) figures.adapter = [info.vendor, info.architecture, info.description].filter(Boolean).join(' ');
    figures.ok = true;
  } catch (err) {
    figures.error = err instanceof Error ? err.message : String(err);
  }
  if (variant.verbose)
    figures.cpuFallbackLines = logLines.filter((l) => /fallback|CPUExecutionProvider|not assigned/i.test(l)).slice(0, 40);
  return figures;
}

function table(all: Figures[]): string {
  const f = (n?: number) => (n === undefined ? '-' : n.toFixed(n < 10 ? 2 : 0));
  const lines = [
    '| variant | session created (ms) | first run (ms) | run, median of 10 (ms) | 2nd session + first run (ms) | pipelines (count, ms summed) | error |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of all) {
    const p = r.pipelines ? `${r.pipelines.count}, ${f(r.pipelines.totalMs)}` : '-';
    const second = r.secondCreateMs === undefined ? '-' : `${f(r.secondCreateMs)} + ${f(r.secondFirstRunMs)}`;
    lines.push(`| ${r.variant} | ${f(r.createMs)} | ${f(r.firstRunMs)} | ${f(r.runMs)} | ${second} | ${p} | ${r.error ?? ''} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--variant');
  if (at >= 0) {
    const variant = VARIANTS.find((v) => v.name === process.argv[at + 1]);
    if (!variant) throw new Error(`no variant ${process.argv[at + 1]}; known: ${VARIANTS.map((v) => v.name).join(', ')}`);
    process.stdout.write(`${JSON.stringify(await runVariant(variant))}\n`);
    return;
  }
  const only = process.env.VARIANTS?.split(',');
  const timeoutMs = Number(process.env.VARIANT_TIMEOUT_MS ?? 120_000);
  const all: Figures[] = [];
  for (const variant of VARIANTS.filter((v) => !only || only.includes(v.name))) {
    const t0 = performance.now();
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--variant', variant.name], {
      encoding: 'utf8',
      timeout: timeoutMs,
      env: { ...process.env, LOOKOUT_ROOT: ROOT },
      maxBuffer: 64 * 1024 * 1024,
    });
    const line = child.stdout.trim().split('\n').pop() ?? '';
    let figures: Figures;
    try {
      figures = JSON.parse(line) as Figures;
    } catch {
      figures = {
        variant: variant.name,
        ok: false,
        error: `no answer (${child.signal ?? `exit ${child.status}`}): ${child.stderr.slice(-300)}`,
      };
    }
    all.push(figures);
    console.error(
      `${variant.name} (${variant.why}): ${((performance.now() - t0) / 1000).toFixed(1)} s ${figures.ok ? 'ok' : figures.error}`,
    );
  }
  console.log(table(all));
  if (process.env.OUT) fs.writeFileSync(path.join(process.env.OUT, 'webgpu-session.json'), `${JSON.stringify(all, null, 2)}\n`);
}

await main();
