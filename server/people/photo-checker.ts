/**
 * The photo check on the server (POST /api/images, POST /api/images/check): shared/recognition/photo-check.ts run
 * in a vision worker (`checkPhoto`), so the cascades never block the event loop; and the training image of a face
 * picked among several: that face's region, widened, so training (which takes the largest face of an image) takes
 * that face.
 *
 * The faces come from the active detection engine, as training will find them: the remote model server when `remote`
 * is selected (PUT /api/models/detection), else the local cascade. A check says which it used; with `remote`
 * selected but down (or failing on this image) it checks with the local cascade and says so in `detection_note`,
 * rather than failing an upload whose check is only advice.
 */
import sharp from 'sharp';
import type { DetectionMethod } from '../../shared/api/common.js';
import type { FaceBoxBody } from '../../shared/api/enrollment.js';
import { rgbToGray } from '../../shared/image/ops.js';
import type { GrayImage, Rect, RgbImage } from '../../shared/image/types.js';
import { type PhotoCheck, toFaceBox, toRect } from '../../shared/recognition/photo-check.js';
import { largestBox } from '../../shared/vision/face-region.js';
import type { VisionPool } from '../engines/faces/vision-protocol.js';
import type { RemoteEngine } from '../engines/remote/remote-engine.js';
import { ApiError } from '../http/errors.js';

/**
 * Margins tried around a picked face, as a share of its box on each side, widest first: 0.5 keeps the head and
 * some background (the cascade needs context to find the face again); a narrower one is taken when a neighbour's
 * face in the wider region would be the largest and so be trained on instead.
 */
export const PICK_MARGINS = [0.5, 0.3, 0.15] as const;

function transferable(gray: GrayImage): ArrayBuffer[] {
  return gray.data.byteOffset === 0 && gray.data.byteLength === gray.data.buffer.byteLength ? [gray.data.buffer as ArrayBuffer] : [];
}

/** The box widened by `margin` of its size on each side, clipped to the image, in whole pixels. */
export function widenedRegion(box: Rect, width: number, height: number, margin: number): Rect {
  const x0 = Math.max(0, Math.floor(box.x - margin * box.width));
  const y0 = Math.max(0, Math.floor(box.y - margin * box.height));
  const x1 = Math.min(width, Math.ceil(box.x + box.width * (1 + margin)));
  const y1 = Math.min(height, Math.ceil(box.y + box.height * (1 + margin)));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

function cropRgb(rgb: RgbImage, r: Rect): RgbImage {
  const out = new Uint8Array(r.width * r.height * rgb.channels);
  const row = r.width * rgb.channels;
  for (let y = 0; y < r.height; y++) {
    const s = ((r.y + y) * rgb.width + r.x) * rgb.channels;
    out.set(rgb.data.subarray(s, s + row), y * row);
  }
  return { width: r.width, height: r.height, channels: rgb.channels, data: out };
}

/** The detection engine a check uses: the method selected now and the remote engine. */
export interface DetectionEngine {
  method(): DetectionMethod;
  remote: Pick<RemoteEngine, 'unavailableReason' | 'detect'>;
}

/** Faces found by the active engine (undefined: the worker runs the local cascade), which one, and why not remote. */
interface EngineBoxes {
  boxes?: Rect[];
  method: DetectionMethod;
  note?: string;
}

const LOCAL_INSTEAD = 'checked with the local detector instead (training will use remote detection once it is back)';

export class PhotoChecker {
  /** Without an engine every check is local (tests, tools). */
  constructor(
    private readonly pool: VisionPool,
    private readonly engine?: DetectionEngine,
  ) {}

  /** The faces of an upright colour image by the active engine; the local cascade (with a note) when remote cannot. */
  private async engineBoxes(rgb: RgbImage): Promise<EngineBoxes> {
    // Read once: a switch while this check runs applies from the next check on.
    if (this.engine?.method() !== 'remote') return { method: 'local' };
    const down = this.engine.remote.unavailableReason;
    if (down) return { method: 'local', note: `remote detection is selected but unavailable (${down}); ${LOCAL_INSTEAD}` };
    try {
      return { boxes: await this.engine.remote.detect(rgb), method: 'remote' };
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return { method: 'local', note: `remote detection failed (${why}); ${LOCAL_INSTEAD}` };
    }
  }

  /**
   * The faces and the check of a decoded image, by the active detection engine (its gray pixels travel to the
   * worker and are gone here after; the colour ones stay).
   */
  async check(image: { gray: GrayImage; rgb: RgbImage }, pick?: FaceBoxBody): Promise<{ boxes: Rect[]; check: PhotoCheck }> {
    const { gray } = image;
    if (pick && (pick.x + pick.w > gray.width || pick.y + pick.h > gray.height)) {
      throw new ApiError(
        'bad_request',
        `field "face": the box ${JSON.stringify(pick)} lies outside the ${gray.width}x${gray.height} image`,
      );
    }
    const { width, height } = gray;
    const engine = await this.engineBoxes(image.rgb);
    const result = await this.pool.run(
      'checkPhoto',
      { gray, ...(pick ? { pick: toRect(pick) } : {}), ...(engine.boxes ? { boxes: engine.boxes } : {}) },
      transferable(gray),
    );
    result.check = { ...result.check, detection_method: engine.method, ...(engine.note ? { detection_note: engine.note } : {}) };
    if (pick && !result.check.picked) {
      const found = result.boxes.map((b) => JSON.stringify(toFaceBox(b))).join(', ');
      throw new ApiError(
        'bad_request',
        `field "face": the box ${JSON.stringify(pick)} matches none of the ${result.boxes.length} faces found in the ${width}x${height} image` +
          (found ? ` (${found}); send one of them` : ''),
      );
    }
    return result;
  }

  /**
   * The training image of a picked face: its widened region of the upright pixels, as JPEG (quality 95), with the
   * widest margin in which that face is the largest the active detector finds (so training takes it).
   */
  async pickedImage(rgb: RgbImage, face: Rect): Promise<Uint8Array> {
    let last: RgbImage | null = null;
    for (const margin of PICK_MARGINS) {
      const region = widenedRegion(face, rgb.width, rgb.height, margin);
      const crop = cropRgb(rgb, region);
      last = crop;
      const found = await this.engineBoxes(crop);
      const gray = rgbToGray(crop);
      const boxes = found.boxes ?? (await this.pool.run('detect', { gray }, transferable(gray)));
      const largest = largestBox(boxes);
      // The picked face's centre, in the crop.
      const cx = face.x + face.width / 2 - region.x;
      const cy = face.y + face.height / 2 - region.y;
      if (largest && cx >= largest.x && cx <= largest.x + largest.width && cy >= largest.y && cy <= largest.y + largest.height) break;
    }
    const crop = last!;
    const out = await sharp(Buffer.from(crop.data.buffer, crop.data.byteOffset, crop.data.length), {
      raw: { width: crop.width, height: crop.height, channels: crop.channels },
    })
      .jpeg({ quality: 95 })
      .toBuffer();
    return new Uint8Array(out.buffer, out.byteOffset, out.length);
  }
}
