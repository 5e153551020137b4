/**
 * The `remote` detection engine as the rest of the server sees it: a RemoteDetector plus its status, checked
 * in the background (never per request) so `/api/ready` and `/api/models/available` answer at once.
 */
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { ApiError } from '../../http/errors.js';
import type { Logger } from '../../logger.js';
import { PeriodicCheck } from '../../periodic-check.js';
import { RemoteDetector, type RemoteStatus } from './remote-detector.js';

export type RemoteEngineStatus = RemoteStatus | 'disabled';

export interface RemoteEngineOptions {
  enabled: boolean;
  url: string;
  modelName: string;
  confidenceThreshold: number;
  timeoutMs: number;
  checkIntervalMs: number;
  log: Logger;
}

export class RemoteEngine {
  private readonly detector: RemoteDetector | null;
  private current: RemoteEngineStatus;
  private detail: string;
  private readonly periodic: PeriodicCheck;

  constructor(private readonly opts: RemoteEngineOptions) {
    if (!opts.enabled) {
      this.detector = null;
      this.current = 'disabled';
      this.detail = 'remote detection is switched off (REMOTE_DETECTOR_ENABLED=false)';
    } else if (!opts.url) {
      this.detector = null;
      this.current = 'disabled';
      this.detail = 'no remote model server is configured (set REMOTE_DETECTOR_URL)';
    } else {
      this.detector = new RemoteDetector(opts.url, opts.modelName, opts.confidenceThreshold, opts.timeoutMs);
      this.current = 'unreachable';
      this.detail = 'not checked yet';
    }
    this.periodic = new PeriodicCheck(opts.checkIntervalMs, () => this.checkOnce());
  }

  /** Checks once now, then keeps checking in the background. */
  async start(): Promise<void> {
    if (this.detector) await this.periodic.start();
  }

  stop(): void {
    this.periodic.stop();
  }

  get status(): RemoteEngineStatus {
    return this.current;
  }

  /** Why the engine cannot be used right now, in words; null when it can. */
  get unavailableReason(): string | null {
    return this.current === 'connected' ? null : this.detail;
  }

  /** Checks now (one check at a time; concurrent callers share it). */
  check(): Promise<void> {
    return this.detector ? this.periodic.now() : Promise.resolve();
  }

  private async checkOnce(): Promise<void> {
    if (!this.detector) return;
    const before = this.current;
    const status = await this.detector!.checkStatus();
    this.current = status;
    this.detail =
      status === 'connected'
        ? 'connected'
        : status === 'model_not_ready'
          ? `model "${this.opts.modelName}" is not ready on ${this.opts.url}${this.detector!.statusDetail ? `: ${this.detector!.statusDetail}` : ''}`
          : `the remote model server at ${this.opts.url} cannot be reached${this.detector!.statusDetail ? `: ${this.detector!.statusDetail}` : ''}`;
    if (status !== before) this.opts.log.info(`remote model server: ${before} -> ${status} (${this.detail})`);
  }

  /** What identifies the served model beyond its name (RemoteDetector.modelIdentity); 503 `remote_unavailable` without it. */
  async modelIdentity(opts: { fresh?: boolean } = {}): Promise<string> {
    if (!this.detector) throw new ApiError('remote_unavailable', this.detail);
    try {
      return await this.detector.modelIdentity(opts);
    } catch (err) {
      void this.check();
      throw err;
    }
  }

  /** Face boxes from the remote server; 503 `remote_unavailable` on any failure. */
  async detect(rgb: RgbImage): Promise<Rect[]> {
    if (!this.detector) throw new ApiError('remote_unavailable', this.detail);
    try {
      return await this.detector.detect(rgb);
    } catch (err) {
      // A failed call is news: re-check now so the status reflects it without waiting for the next poll.
      void this.check();
      throw err;
    }
  }
}
