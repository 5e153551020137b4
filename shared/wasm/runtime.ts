/**
 * The part of the WebAssembly JavaScript API the project's own modules use (shared/ is typed without the DOM's or
 * Node's globals), and the runtime itself where there is one: undefined where WebAssembly is missing or refused.
 */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

export interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}

export const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** A WebAssembly memory page, in bytes. */
export const WASM_PAGE = 65536;
