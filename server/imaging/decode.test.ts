import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { rgbToGray } from '../../shared/image/ops.js';
import { decodeImage, ImageDecoder } from './decode.js';
import { PixelBudget } from './pixel-budget.js';
import { declaredHugeJpeg } from '../../test/helpers/image-bombs.js';

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

  it('refuses an image whose data ends before its pixels do (a few hundred bytes declaring 6000x6000)', async () => {
    const bomb = await declaredHugeJpeg();
    expect(bomb.length).toBeLessThan(400);
    await expect(decodeImage(bomb, { maxPixels: 40_000_000 })).rejects.toMatchObject({
      code: 'invalid_image',
      message: expect.stringMatching(/could not be decoded whole.*premature end/i),
    });
  });

  it('refuses a truncated PNG', async () => {
    const png = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#123' } })
      .png()
      .toBuffer();
    await expect(decodeImage(png.subarray(0, png.length - 40), { maxPixels: 1e6 })).rejects.toMatchObject({ code: 'invalid_image' });
  });
});

describe('ImageDecoder', () => {
  it('holds width x height pixels of the budget while the work runs, and gives them back after, also on failure', async () => {
    const budget = new PixelBudget({ capacity: 1_000_000, waitMs: 0 });
    const decoder = new ImageDecoder({ maxPixels: 40_000_000 }, budget);
    const png = await sharp({ create: { width: 30, height: 20, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    const held = await decoder.use(png, () => budget.inUse);
    expect(held).toBe(600);
    expect(budget.inUse).toBe(0);
    await expect(decoder.use(png, () => Promise.reject(new Error('worker failed')))).rejects.toThrow('worker failed');
    expect(budget.inUse).toBe(0);
    // An image that fails to decode gives its lease back too.
    await expect(decoder.use(await declaredHugeJpeg(), () => 0)).rejects.toMatchObject({ code: 'invalid_image' });
    expect(budget.inUse).toBe(0);
  });
});
