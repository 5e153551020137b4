import { describe, expect, it } from 'vitest';
import { YoloModelError } from './yolo.js';
import { checkYoloSession, type YoloSessionInfo } from './yolo-session.js';

const tensor = (name: string, shape: (number | string)[], type = 'float32') => ({ name, isTensor: true as const, type, shape });

function session(inputs: YoloSessionInfo['inputMetadata'], outputs: YoloSessionInfo['outputMetadata']): YoloSessionInfo {
  return { inputNames: inputs.map((i) => i.name), inputMetadata: inputs, outputMetadata: outputs };
}

describe('checkYoloSession', () => {
  it('takes the input size and the first output in a supported layout', () => {
    expect(checkYoloSession(session([tensor('images', [1, 3, 640, 640])], [tensor('output0', [1, 84, 8400])]), 'y.onnx')).toEqual({
      inputName: 'images',
      outputName: 'output0',
      width: 640,
      height: 640,
      layout: 'v8',
    });
    // YOLOv5 with extra head outputs after the detection output; symbolic size takes the default.
    const v5 = session([tensor('images', ['b', 3, 'h', 'w'])], [tensor('output', [1, 'n', 85]), tensor('raw', [1, 3, 80, 80, 85])]);
    expect(checkYoloSession(v5, 'v5.onnx', 416)).toEqual({
      inputName: 'images',
      outputName: 'output',
      width: 416,
      height: 416,
      layout: 'v5',
    });
    // A fully symbolic output: the layout is settled on the first run.
    expect(checkYoloSession(session([tensor('x', [1, 3, 320, 320])], [tensor('y', ['a', 'b', 'c'])]), 'm')).not.toHaveProperty('layout');
  });

  it('says what is wrong with anything else', () => {
    const out = [tensor('output0', [1, 84, 8400])];
    expect(() => checkYoloSession(session([tensor('a', [1, 3, 64, 64]), tensor('b', [1])], out), 'two.onnx')).toThrow(
      /two.onnx: expected one input.*found 2: a, b/,
    );
    expect(() => checkYoloSession(session([tensor('a', [1, 3, 64, 64], 'uint8')], out), 'u8.onnx')).toThrow(/is a uint8 tensor/);
    expect(() => checkYoloSession(session([tensor('a', [1, 1, 64, 64])], out), 'gray.onnx')).toThrow(YoloModelError);
    expect(() => checkYoloSession(session([tensor('a', [1, 3, 64, 64])], [tensor('seg', [1, 116, 8400])]), 'seg.onnx')).toThrow(
      /seg.onnx: unsupported YOLO output: found "seg" float32 \[1, 116, 8400\]/,
    );
  });
});
