import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { rgbToGray } from '../../shared/image/ops.js';
import { decodeImage } from './decode.js';

describe('decodeImage', () => {
  it('gives the upright RGB pixels and, on first use only, the same grayscale as rgbToGray', async () => {
    const png = await sharp({ create: { width: 4, height: 2, channels: 3, background: '#336699' } })
      .png()
      .toBuffer();
    const decoded = await decodeImage(png, { maxPixels: 100 });
    expect(decoded.format).toBe('png');
    expect([decoded.rgb.width, decoded.rgb.height, decoded.rgb.channels]).toEqual([4, 2, 3]);
    expect(Array.from(decoded.rgb.data.slice(0, 3))).toEqual([0x33, 0x66, 0x99]);
    const first = decoded.gray;
    expect(Array.from(first.data)).toEqual(Array.from(rgbToGray(decoded.rgb).data));
    // Computed once: the same image on every access (the face engines transfer its buffer to a worker).
    expect(decoded.gray).toBe(first);
  });

  it('refuses an image over the pixel limit with 413 image_too_large, before decoding it', async () => {
    const png = await sharp({ create: { width: 20, height: 20, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    await expect(decodeImage(png, { maxPixels: 100 })).rejects.toMatchObject({ code: 'image_too_large' });
  });
});
