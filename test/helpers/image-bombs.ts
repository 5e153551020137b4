/**
 * Image bombs for the memory tests: small files that declare far more pixels than they hold.
 */
import sharp from 'sharp';

/** A JPEG that declares 6000x6000 but whose data stops one byte after the scan header (about 265 bytes). */
export async function declaredHugeJpeg(): Promise<Buffer> {
  const whole = await sharp({ create: { width: 6000, height: 6000, channels: 3, background: { r: 120, g: 130, b: 140 } } })
    .jpeg({ quality: 50, optimizeCoding: true })
    .toBuffer();
  let sos = 0;
  while (!(whole[sos] === 0xff && whole[sos + 1] === 0xda)) sos++;
  const scanStart = sos + 2 + whole.readUInt16BE(sos + 2);
  return Buffer.concat([whole.subarray(0, scanStart + 1), Buffer.from([0xff, 0xd9])]);
}
