/**
 * Object detection for a live camera with two frames in flight: on WASM one NanoDet pass is most of a frame's
 * time (~170 ms on one thread of a small machine) and onnxruntime-web's threads speed one pass up far less
 * than twofold (~1.8x on 2, much less on shared cores), while the letterbox and decoding run alone. So where
 * frames overlap, each is detected by its own lane (object-worker.ts) with its share of the cores: same graph,
 * same session options, the same detections.
 *
 * A lone frame (a photo, one frame in flight) goes to the engine worker's own detector (every core on one
 * pass: the lowest latency), and the lanes are only started once two frames overlap, so a page that never
 * overlaps frames holds one session. They stop after LANE_IDLE_MS without overlap. Should they fail to load,
 * every frame stays on the engine worker.
 *
 * WebGPU (#29): creating NanoDet's WebGPU session took 29.7 s on a real GPU against 0.27 s on WASM, so the first
 * frames never wait for it. Where the engine runs on a hardware WebGPU adapter (useGpu), the first detection
 * starts a GPU lane that creates and warms up the WebGPU session in its own worker, once; frames are detected on
 * WASM meanwhile, and every frame after the lane is warm goes to it. A lane that cannot run WebGPU (or fails
 * later) is given up for good, with the reason, and WASM carries on. Each frame is detected once, by one of them.
 */
import type { ObjectLaneOps } from './object-worker';
import { OpsWorker } from './ops-worker';
import type { DetectObjectsResult, FramePixels } from './protocol';

/** Lanes and threads per lane; null: the engine worker alone. */
export interface LanePlan {
  lanes: number;
  threadsPerLane: number;
}

/** Lanes stop after this long without two frames in flight. */
export const LANE_IDLE_MS = 30_000;

/**
 * The configuration measured fastest on 2 cores (bench/RESULTS.md, issue #16 item 9): a lane per frame in
 * flight (the Objects page keeps 2), each with its share of the cores (up to 4): 2 cores give 2 single-threaded
 * lanes. One core gains nothing from a second frame in flight: the engine worker alone.
 */
export function defaultLanePlan(cores: number): LanePlan | null {
  const n = Math.min(4, Math.floor(cores) || 1);
  return n >= 2 ? { lanes: 2, threadsPerLane: Math.floor(n / 2) } : null;
}

export interface Lane {
  run<K extends keyof ObjectLaneOps>(op: K, args: ObjectLaneOps[K]['args'], transfer?: Transferable[]): Promise<ObjectLaneOps[K]['result']>;
  terminate(): void;
}

/** NanoDet on WebGPU: not wanted (no hardware adapter, a YOLO model), warming up in its lane, running, or given up. */
export type GpuLaneState = 'off' | 'warming' | 'warm' | 'failed';

/** What detects objects now, for the page to show. */
export interface ObjectBackend {
  /** The runtime of the latest answer (`onnxruntime-web wasm`, `onnxruntime-web webgpu`, `tfjs webgl`…); null before one. */
  runtime: string | null;
  gpu: GpuLaneState;
  /** Why WebGPU is not used (with `failed`), in words. */
  gpuReason?: string;
  /** What the GPU lane's load took: the graph, its WebGPU session and the warm-up pass (with `warm`). */
  gpuWarmMs?: number;
}

const GPU_RUNTIME = 'onnxruntime-web webgpu';

export interface ObjectPoolOptions {
  /** The engine worker's detectObjects. */
  main: (args: { frame: FramePixels; confidence?: number }, transfer: Transferable[]) => Promise<DetectObjectsResult>;
  /** The model URLs the engine worker loads (absolute). */
  urls: () => { nanodet: string; yolo?: string } | null;
  plan: LanePlan | null;
  startLane?: () => Lane;
  /** The GPU lane's worker (tests: a slow fake). */
  startGpuLane?: () => Lane;
  /** Told each time what detects objects changes. */
  onBackend?: (backend: ObjectBackend) => void;
  idleMs?: number;
}

function startWorkerLane(): Lane {
  const worker = new Worker(new URL('./object-worker.ts', import.meta.url), { type: 'module', name: 'lookout-objects' });
  return new OpsWorker<ObjectLaneOps>(worker, 'object lane');
}

function startGpuWorkerLane(): Lane {
  const worker = new Worker(new URL('./object-worker.ts', import.meta.url), { type: 'module', name: 'lookout-objects-webgpu' });
  return new OpsWorker<ObjectLaneOps>(worker, 'WebGPU object lane');
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

interface LaneState {
  lane: Lane;
  busy: number;
}

export class ObjectPool {
  private inflight = 0;
  private lanes: LaneState[] = [];
  private starting: Promise<void> | null = null;
  private failed = false;
  /** The engine worker's runtime, from its first answer: lanes help only onnxruntime-web's WASM. */
  private mainRuntime: string | null = null;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private gpuWanted = false;
  private gpuLane: Lane | null = null;
  private gpuWarming: Lane | null = null;
  private gpuStarting: Promise<void> | null = null;
  private backend: ObjectBackend = { runtime: null, gpu: 'off' };

  constructor(private readonly options: ObjectPoolOptions) {}

  /** Lanes running now (0 until two frames have overlapped). */
  get laneCount(): number {
    return this.lanes.length;
  }

  /** What detects objects now. */
  get current(): ObjectBackend {
    return this.backend;
  }

  /**
   * Whether NanoDet should move to WebGPU (the engine worker's tfjs runs on a hardware WebGPU adapter): the GPU
   * lane starts at the first detection, or at warmGpu().
   */
  useGpu(wanted: boolean): void {
    this.gpuWanted = wanted;
  }

  async detect(frame: FramePixels, transfer: Transferable[], confidence?: number): Promise<DetectObjectsResult> {
    this.inflight++;
    try {
      const args = { frame, ...(confidence !== undefined ? { confidence } : {}) };
      this.warmGpu();
      if (this.gpuLane) return await this.detectOnGpu(this.gpuLane, args, transfer);
      const lane = this.pickLane();
      if (!lane) {
        if (this.inflight > 1) this.startLanes();
        const result = await this.options.main(args, transfer);
        this.mainRuntime = result.runtime;
        // A frame sent before WebGPU took over may end after it: the page keeps showing WebGPU.
        if (!this.gpuLane) this.noteRuntime(result.runtime);
        return result;
      }
      this.keepAlive();
      lane.busy++;
      try {
        const result = await lane.lane.run('detect', args, transfer);
        if (!this.gpuLane) this.noteRuntime(result.runtime);
        return { ...result, lane: this.lanes.indexOf(lane) + 1 };
      } finally {
        lane.busy--;
      }
    } finally {
      this.inflight--;
    }
  }

  /**
   * Starts the GPU lane's load and warm-up in the background, once per pool: later calls, and every frame,
   * find it warming, warm or given up. Nothing happens unless useGpu(true) and the detector is NanoDet.
   */
  warmGpu(): void {
    const where = this.options.urls();
    if (!this.gpuWanted || this.backend.gpu !== 'off' || !where || where.yolo) return;
    const lane = (this.options.startGpuLane ?? startGpuWorkerLane)();
    this.gpuWarming = lane;
    this.setBackend({ gpu: 'warming' });
    this.gpuStarting = lane.run('load', { nanodet: where.nanodet, threads: 1, gpu: true }).then(
      (loaded) => {
        this.gpuWarming = null;
        if (this.backend.gpu !== 'warming') {
          lane.terminate(); // the pool was stopped meanwhile
          return;
        }
        if (loaded.runtime !== GPU_RUNTIME) {
          this.giveUpGpu(lane, `the WebGPU lane runs ${loaded.runtime}`);
          return;
        }
        this.gpuLane = lane;
        this.setBackend({ gpu: 'warm', gpuWarmMs: loaded.loadMs });
      },
      (err: unknown) => {
        this.gpuWarming = null;
        this.giveUpGpu(lane, messageOf(err));
      },
    );
  }

  /** Resolves once the GPU lane is warm or given up (at once when none was started). */
  async gpuReady(): Promise<void> {
    await this.gpuStarting;
  }

  private async detectOnGpu(
    lane: Lane,
    args: { frame: FramePixels; confidence?: number },
    transfer: Transferable[],
  ): Promise<DetectObjectsResult> {
    try {
      const result = await lane.run('detect', args, transfer);
      this.noteRuntime(result.runtime);
      return result;
    } catch (err) {
      // A lost device or a crashed lane: this frame's pixels went with it; the next frames go back to WASM.
      if (this.gpuLane === lane) this.giveUpGpu(lane, `WebGPU stopped: ${messageOf(err)}`);
      throw err;
    }
  }

  private giveUpGpu(lane: Lane, reason: string): void {
    lane.terminate();
    if (this.gpuLane === lane) this.gpuLane = null;
    if (this.backend.gpu === 'off') return; // the pool was stopped meanwhile
    console.warn(`NanoDet stays on WASM: ${reason}`);
    this.setBackend({ gpu: 'failed', gpuReason: reason });
  }

  private noteRuntime(runtime: string): void {
    if (runtime !== this.backend.runtime) this.setBackend({ runtime });
  }

  private setBackend(change: Partial<ObjectBackend>): void {
    const { gpuReason: _r, gpuWarmMs: _w, ...kept } = this.backend;
    this.backend = { ...(change.gpu ? kept : this.backend), ...change };
    this.options.onBackend?.(this.backend);
  }

  /** A free lane (the least busy) while frames overlap; null: the engine worker takes this frame. */
  private pickLane(): LaneState | null {
    if (this.lanes.length === 0) return null;
    const laneBusy = this.lanes.some((l) => l.busy > 0);
    // A lone frame gets every core on the engine worker's detector.
    if (this.inflight <= 1 && !laneBusy) return null;
    return this.lanes.reduce((a, b) => (b.busy < a.busy ? b : a));
  }

  private startLanes(): void {
    const { plan, urls } = this.options;
    const where = urls();
    if (!plan || plan.lanes < 2 || this.failed || this.starting || !where || this.gpuLane) return;
    if (this.mainRuntime !== 'onnxruntime-web wasm') return;
    const start = this.options.startLane ?? startWorkerLane;
    const lanes = Array.from({ length: plan.lanes }, () => start());
    this.starting = Promise.all(lanes.map((lane) => lane.run('load', { ...where, threads: plan.threadsPerLane }))).then(
      (loaded) => {
        // A lane on anything but WASM (it could not start onnxruntime) would be slower than the engine worker.
        if (loaded.some((l) => l.runtime !== 'onnxruntime-web wasm')) throw new Error('a lane is not on onnxruntime-web wasm');
        this.lanes = lanes.map((lane) => ({ lane, busy: 0 }));
        this.starting = null;
        this.keepAlive();
      },
      (err: unknown) => {
        for (const lane of lanes) lane.terminate();
        this.failed = true;
        this.starting = null;
        console.warn(`object lanes unavailable, detecting on the engine worker alone: ${err instanceof Error ? err.message : String(err)}`);
      },
    );
  }

  /** Waits for lanes being started (tests, the bench's warm-up). */
  async ready(): Promise<void> {
    await this.starting;
  }

  private keepAlive(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stopLanes(), this.options.idleMs ?? LANE_IDLE_MS);
  }

  private stopLanes(): void {
    // Frames still on a lane finish first; the next overlap starts fresh lanes.
    if (this.lanes.some((l) => l.busy > 0)) {
      this.keepAlive();
      return;
    }
    for (const l of this.lanes) l.lane.terminate();
    this.lanes = [];
  }

  /** Stops the lanes (the GPU lane too, warm or warming); the engine worker is the caller's. */
  terminate(): void {
    clearTimeout(this.idleTimer);
    for (const l of this.lanes) l.lane.terminate();
    this.lanes = [];
    this.gpuLane?.terminate();
    this.gpuLane = null;
    this.gpuWarming?.terminate();
    this.gpuWarming = null;
    this.gpuWanted = false;
    this.backend = { runtime: this.backend.runtime, gpu: 'off' };
  }
}
