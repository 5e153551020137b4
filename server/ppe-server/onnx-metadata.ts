/**
 * The metadata properties of an ONNX model (app.ts reads the class names from them), read from its bytes.
 */
import { YoloModelError } from '../../shared/objects/yolo.js';

/**
 * ModelProto.metadata_props of a serialized ONNX model (onnx.proto: field 14, StringStringEntryProto with
 * key 1 and value 2): onnxruntime's JavaScript API does not expose them. Only the top level of the model is
 * walked; the graph is skipped by its length.
 */
export function readOnnxMetadata(model: Uint8Array): Record<string, string> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  const read = (bytes: Uint8Array, each: (field: number, value: Uint8Array | null) => void) => {
    let pos = 0;
    const varint = (): number => {
      let value = 0;
      let factor = 1;
      for (let i = 0; i < 10; i++) {
        if (pos >= bytes.length) throw new YoloModelError('the ONNX model is truncated');
        const byte = bytes[pos++];
        value += (byte & 0x7f) * factor;
        factor *= 128;
        if ((byte & 0x80) === 0) return value;
      }
      throw new YoloModelError('the ONNX model is not a valid protobuf message');
    };
    while (pos < bytes.length) {
      const tag = varint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      if (wire === 0) {
        varint();
        each(field, null);
      } else if (wire === 1 || wire === 5) {
        pos += wire === 1 ? 8 : 4;
        each(field, null);
      } else if (wire === 2) {
        const len = varint();
        if (pos + len > bytes.length) throw new YoloModelError('the ONNX model is truncated');
        each(field, bytes.subarray(pos, pos + len));
        pos += len;
      } else throw new YoloModelError('the ONNX model is not a valid protobuf message');
    }
    if (pos > bytes.length) throw new YoloModelError('the ONNX model is truncated');
  };
  const props: Record<string, string> = {};
  read(model, (field, value) => {
    if (field !== 14 || !value) return;
    let key = '';
    let text = '';
    read(value, (f, v) => {
      if (f === 1 && v) key = decoder.decode(v);
      else if (f === 2 && v) text = decoder.decode(v);
    });
    props[key] = text;
  });
  return props;
}
