/** An 8-bit single-channel image, row-major, `data.length === width * height`. */
export interface GrayImage {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

/** An 8-bit interleaved colour image in RGB (3 channels) or RGBA (4 channels) order. */
export interface RgbImage {
  readonly width: number;
  readonly height: number;
  readonly channels: 3 | 4;
  readonly data: Uint8Array;
}

/** An axis-aligned rectangle in pixels, OpenCV's `cv::Rect` convention (x, y of the top-left corner). */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}
