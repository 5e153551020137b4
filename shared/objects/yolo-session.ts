/**
 * Checks an opened ONNX Runtime session (onnxruntime-node on the server, onnxruntime-web in the browser: both
 * expose the same `inputMetadata` / `outputMetadata`) for a YOLO detector this project can decode, and picks
 * its input size and detection output. Errors say what was found and what is supported.
 */
import {
  YOLO_DEFAULT_INPUT_SIZE,
  YOLO_NUM_CLASSES,
  YoloModelError,
  resolveYoloInputSize,
  yoloLayoutOf,
  yoloSupportedOutputs,
  type YoloDim,
  type YoloLayout,
} from './yolo.js';

/** The slice of ONNX Runtime's `InferenceSession.ValueMetadata` the check reads. */
export type YoloValueMetadata =
  | { readonly name: string; readonly isTensor: true; readonly type: string; readonly shape: readonly YoloDim[] }
  | { readonly name: string; readonly isTensor: false };

export interface YoloSessionInfo {
  readonly inputNames: readonly string[];
  readonly inputMetadata: readonly YoloValueMetadata[];
  readonly outputMetadata: readonly YoloValueMetadata[];
}

export interface YoloIo {
  inputName: string;
  outputName: string;
  width: number;
  height: number;
  /** Undefined while the declared output shape leaves it open; settle it on the first run. */
  layout?: YoloLayout;
}

function shapeText(shape: readonly YoloDim[]): string {
  return `[${shape.map((d) => (typeof d === 'string' ? JSON.stringify(d) : String(d))).join(', ')}]`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * One float32 image input `[1, 3, H, W]` and a float32 output in a supported layout for `numClasses` classes
 * (default COCO's 80); `name` is for messages.
 */
export function checkYoloSession(
  session: YoloSessionInfo,
  name: string,
  defaultInputSize: number = YOLO_DEFAULT_INPUT_SIZE,
  numClasses: number = YOLO_NUM_CLASSES,
): YoloIo {
  const inputs = session.inputMetadata;
  if (inputs.length !== 1) {
    throw new YoloModelError(
      `${name}: expected one input (an image, [1, 3, H, W] float32), found ${inputs.length}: ${session.inputNames.join(', ')}`,
    );
  }
  const input = inputs[0];
  if (!input.isTensor || input.type !== 'float32') {
    const found = input.isTensor ? `a ${input.type} tensor` : 'a non-tensor value';
    throw new YoloModelError(`${name}: input "${input.name}" is ${found}; supported: a float32 tensor [1, 3, H, W]`);
  }
  let size: { width: number; height: number };
  try {
    size = resolveYoloInputSize(input.shape, defaultInputSize);
  } catch (err) {
    throw new YoloModelError(`${name}: input "${input.name}": ${errorText(err)}`);
  }
  // Ultralytics exports have one detection output; older YOLOv5 exports add the raw head outputs after it.
  const found: string[] = [];
  for (const output of session.outputMetadata) {
    const shape = output.isTensor ? output.shape : [];
    found.push(`"${output.name}" ${output.isTensor ? `${output.type} ${shapeText(shape)}` : '(not a tensor)'}`);
    if (!output.isTensor || output.type !== 'float32') continue;
    let layout: YoloLayout | undefined;
    try {
      layout = yoloLayoutOf(shape, numClasses);
    } catch {
      continue;
    }
    return { inputName: input.name, outputName: output.name, ...size, ...(layout ? { layout } : {}) };
  }
  throw new YoloModelError(`${name}: unsupported YOLO output: found ${found.join(', ')}; ${yoloSupportedOutputs(numClasses)}, float32`);
}
