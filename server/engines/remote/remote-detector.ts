/**
 * The `remote` face detection engine: a KServe V2 REST client for an SSD face detector served by OpenVINO
 * Model Server (or Lookout's own model server). Names and shapes come from the model's descriptor, fetched
 * once and cached; the pure conversions live in shared/vision/ssd-face.ts.
 *
 * Every failure, whatever its cause, is an ApiError `remote_unavailable` (503) whose message says which one.
 */
import { createHash } from 'node:crypto';
import type { Rect, RgbImage } from '../../../shared/image/types.js';
import { inferResponse, modelConfigStatus, modelMetadata, shapeSize, type ModelMetadata } from '../../../shared/kserve/protocol.js';
import {
  parseSsdDetections,
  ssdContract,
  ssdInput,
  SsdContractError,
  type SsdContract,
  type SsdDetection,
} from '../../../shared/vision/ssd-face.js';
import { ApiError } from '../../http/errors.js';
import { fetchIdempotent } from '../../http/idempotent-fetch.js';

export type RemoteStatus = 'connected' | 'unreachable' | 'model_not_ready';

/** The model's contract and what identifies the model behind it (see modelIdentity). */
interface Described {
  contract: SsdContract;
  identity: string;
}

/**
 * What identifies the served model beyond its name: its versions, platform and tensor descriptions. Another version
 * (or a model with other tensors put under the same name) is another detector to the boxes it made.
 */
function identityOf(meta: ModelMetadata): string {
  const tensors = createHash('sha256')
    .update(JSON.stringify([meta.inputs, meta.outputs]))
    .digest('hex')
    .slice(0, 16);
  return `${(meta.versions ?? []).join(',') || '-'}|${meta.platform}|${tensors}`;
}

/** A failure before any HTTP status was seen (refused, timed out, reset). */
class Unreachable extends ApiError {}

export class RemoteDetector {
  readonly url: string;
  private described: Promise<Described> | null = null;
  private detail: string | null = null;

  constructor(
    url: string,
    readonly modelName: string,
    readonly confidenceThreshold = 0.5,
    readonly timeoutMs = 5000,
  ) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new TypeError(`remote model server URL "${url}" is not a valid URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      throw new TypeError(`remote model server URL "${url}" must be http or https`);
    if (!(confidenceThreshold >= 0 && confidenceThreshold <= 1)) throw new RangeError('confidenceThreshold must be between 0 and 1');
    if (!(timeoutMs > 0)) throw new RangeError('timeoutMs must be positive');
    this.url = parsed.href.replace(/\/+$/, '');
  }

  /** Why the last checkStatus() was not `connected` (null when it was). */
  get statusDetail(): string | null {
    return this.detail;
  }

  private modelPath(suffix = ''): string {
    return `/v2/models/${encodeURIComponent(this.modelName)}${suffix}`;
  }

  /** One HTTP exchange under the timeout; the body is read inside it too. */
  private async exchange(method: 'GET' | 'POST', path: string, what: string, body?: string): Promise<{ status: number; text: string }> {
    try {
      const res = await (method === 'GET' ? fetchIdempotent : fetch)(this.url + path, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      throw new Unreachable('remote_unavailable', this.networkMessage(err, what));
    }
  }

  private networkMessage(err: unknown, what: string): string {
    const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
      return `The remote model server at ${this.url} did not answer ${what} within ${this.timeoutMs} ms.`;
    }
    const code = e?.cause?.code;
    if (code === 'ECONNREFUSED') return `The remote model server at ${this.url} refused the connection for ${what}; is it running?`;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `The remote model server host in ${this.url} cannot be resolved.`;
    if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET')
      return `The remote model server at ${this.url} closed the connection during ${what}.`;
    return `The remote model server at ${this.url} could not be reached for ${what} (${code ?? e?.cause?.message ?? e?.message ?? String(err)}).`;
  }

  /** GET/POST expecting 2xx JSON; anything else becomes a clear remote_unavailable. */
  private async json(method: 'GET' | 'POST', path: string, what: string, body?: string): Promise<{ status: number; value: unknown }> {
    const { status, text } = await this.exchange(method, path, what, body);
    if (status < 200 || status > 299) {
      let reason = '';
      try {
        const err = (JSON.parse(text) as { error?: unknown }).error;
        if (typeof err === 'string') reason = `: ${err}`;
      } catch {
        // Not a V2 error body; the status alone says enough.
      }
      throw new ApiError('remote_unavailable', `The remote model server answered HTTP ${status} to ${what}${reason}.`, { status });
    }
    try {
      return { status, value: JSON.parse(text) };
    } catch {
      throw new ApiError('remote_unavailable', `The remote model server sent malformed JSON in reply to ${what}.`);
    }
  }

  private async fetchContract(): Promise<Described> {
    const what = `the descriptor request for model "${this.modelName}"`;
    const { value } = await this.json('GET', this.modelPath(), what);
    const meta = modelMetadata.safeParse(value);
    if (!meta.success) {
      const issue = meta.error.issues[0];
      throw new ApiError(
        'remote_unavailable',
        `The remote model server sent an invalid descriptor for model "${this.modelName}" (${issue.path.join('.') || 'body'}: ${issue.message}).`,
      );
    }
    try {
      return { contract: ssdContract(meta.data as ModelMetadata), identity: identityOf(meta.data as ModelMetadata) };
    } catch (err) {
      if (err instanceof SsdContractError) {
        throw new ApiError(
          'remote_unavailable',
          `Model "${this.modelName}" on the remote model server is not an SSD face detector this engine can use: ${err.message}.`,
        );
      }
      throw err;
    }
  }

  /** The model's descriptor, fetched once and cached (a failed fetch is retried next call; checkStatus refreshes it). */
  private describe(): Promise<Described> {
    if (!this.described) {
      const p = this.fetchContract();
      this.described = p;
      p.catch(() => {
        if (this.described === p) this.described = null;
      });
    }
    return this.described;
  }

  /** The model's input/output contract, from its descriptor. */
  async descriptor(): Promise<SsdContract> {
    return (await this.describe()).contract;
  }

  /**
   * The served model's identity (versions, platform, tensors) as of its last descriptor: part of the version of the
   * training features its boxes made, so a new model version recomputes them. `fresh`: the descriptor is fetched
   * again first (a training asks so). 503 `remote_unavailable` when the descriptor cannot be had.
   */
  async modelIdentity(opts: { fresh?: boolean } = {}): Promise<string> {
    if (opts.fresh) this.invalidate();
    return (await this.describe()).identity;
  }

  /** Forgets the cached descriptor (the next call fetches it again). */
  invalidate(): void {
    this.described = null;
  }

  /** Faces with their confidence, in pixels of `rgb`, highest confidence first. */
  async detectWithScores(rgb: RgbImage): Promise<SsdDetection[]> {
    const contract = await this.descriptor();
    const tensor = ssdInput(rgb, contract);
    const body = JSON.stringify({
      inputs: [{ name: contract.inputName, shape: contract.inputShape, datatype: contract.inputDatatype, data: Array.from(tensor) }],
      outputs: [{ name: contract.outputName }],
    });
    try {
      const { value } = await this.json('POST', this.modelPath('/infer'), `the inference request for model "${this.modelName}"`, body);
      const data = this.outputData(value, contract);
      return parseSsdDetections(data, rgb.width, rgb.height, this.confidenceThreshold);
    } catch (err) {
      // The model may have been replaced: fetch the descriptor again next time, unless the server was just away.
      if (!(err instanceof Unreachable)) this.invalidate();
      throw err;
    }
  }

  /** Face boxes in pixels of `rgb`, highest confidence first. */
  async detect(rgb: RgbImage): Promise<Rect[]> {
    return (await this.detectWithScores(rgb)).map(({ x, y, width, height }) => ({ x, y, width, height }));
  }

  /** Checks the infer response and returns the detection output's values. */
  private outputData(value: unknown, contract: SsdContract): number[] {
    const res = inferResponse.safeParse(value);
    if (!res.success) {
      const issue = res.error.issues[0];
      throw new ApiError(
        'remote_unavailable',
        `The remote model server sent an invalid inference response (${issue.path.join('.') || 'body'}: ${issue.message}).`,
      );
    }
    const out = res.data.outputs.find((o) => o.name === contract.outputName);
    if (!out) {
      throw new ApiError(
        'remote_unavailable',
        `The remote model server's inference response has no output "${contract.outputName}" (got ${res.data.outputs.map((o) => `"${o.name}"`).join(', ')}).`,
      );
    }
    if (out.datatype !== 'FP32') {
      throw new ApiError(
        'remote_unavailable',
        `The remote model server's output "${out.name}" has datatype ${out.datatype}, expected FP32.`,
      );
    }
    if (out.shape.length < 2 || out.shape[out.shape.length - 1] !== 7 || out.shape.some((d) => d < 0)) {
      throw new ApiError(
        'remote_unavailable',
        `The remote model server's output "${out.name}" has shape [${out.shape}], expected rows of 7 values such as [1, 1, 200, 7].`,
      );
    }
    if (out.data.length !== shapeSize(out.shape)) {
      throw new ApiError(
        'remote_unavailable',
        `The remote model server's output "${out.name}" holds ${out.data.length} values but its shape [${out.shape}] needs ${shapeSize(out.shape)}.`,
      );
    }
    return out.data;
  }

  /**
   * Connectivity for the dashboard, meant to be polled (not called per request): `connected` when /v1/config
   * lists a version of the model as AVAILABLE and its descriptor is usable; `model_not_ready` when the server
   * answers but the model is missing, loading or unusable; `unreachable` otherwise. Servers without OVMS's
   * /v1/config (404) are asked `GET /v2/models/{name}/ready` instead. Never throws.
   */
  async checkStatus(): Promise<RemoteStatus> {
    try {
      const status = await this.modelStatus();
      if (status !== 'connected') return status;
      this.invalidate();
      await this.descriptor();
      this.detail = null;
      return 'connected';
    } catch (err) {
      this.detail = err instanceof Error ? err.message : String(err);
      // Past /v1/config the server has answered: a descriptor it cannot give or we cannot use means the model
      // is not ready for this engine.
      return err instanceof Unreachable ? 'unreachable' : 'model_not_ready';
    }
  }

  private async modelStatus(): Promise<RemoteStatus> {
    const config = await this.exchange('GET', '/v1/config', 'the model status request');
    if (config.status === 404) {
      const ready = await this.exchange('GET', this.modelPath('/ready'), 'the model readiness request');
      if (ready.status >= 200 && ready.status < 300) return 'connected';
      this.detail = `The remote model server reports model "${this.modelName}" not ready (HTTP ${ready.status}).`;
      return 'model_not_ready';
    }
    if (config.status < 200 || config.status > 299) {
      this.detail = `The remote model server answered HTTP ${config.status} to the model status request.`;
      return 'unreachable';
    }
    let parsed: ReturnType<typeof modelConfigStatus.safeParse>;
    try {
      parsed = modelConfigStatus.safeParse(JSON.parse(config.text));
    } catch {
      this.detail = 'The remote model server sent malformed JSON in reply to the model status request.';
      return 'unreachable';
    }
    if (!parsed.success) {
      this.detail = 'The remote model server sent a model status that is not in the OVMS /v1/config format.';
      return 'unreachable';
    }
    const entry = parsed.data[this.modelName];
    if (!entry) {
      const served = Object.keys(parsed.data);
      this.detail = `The remote model server does not serve model "${this.modelName}" (it serves: ${served.length ? served.join(', ') : 'nothing'}).`;
      return 'model_not_ready';
    }
    if (!entry.model_version_status.some((v) => v.state === 'AVAILABLE')) {
      const states = entry.model_version_status.map((v) => `${v.version ?? '?'}: ${v.state}`).join(', ');
      this.detail = `Model "${this.modelName}" on the remote model server has no AVAILABLE version (${states || 'no versions'}).`;
      return 'model_not_ready';
    }
    return 'connected';
  }
}
