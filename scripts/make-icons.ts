/**
 * Draws Lookout's app icons (client/public/icons/): an eye inside a detector's corner brackets, on the header's
 * navy. One SVG is the source; the PNGs the web app manifest and iOS need are rendered from it with sharp.
 * The files are committed; run again after changing the drawing: `npx tsx scripts/make-icons.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../client/public/icons');

const NAVY = '#14213d'; // --header in client/src/styles.css
const BLUE = '#1d4ed8'; // --accent
const AMBER = '#f59e0b'; // the focus ring colour

/** The drawing on a 512 x 512 canvas, centred on (256, 256), at `scale` (1 fills the canvas). */
function artwork(scale: number): string {
  const bracket = (d: string) =>
    `<path d="${d}" fill="none" stroke="${AMBER}" stroke-width="30" stroke-linecap="round" stroke-linejoin="round"/>`;
  return `<g transform="translate(256 256) scale(${scale}) translate(-256 -256)">
  ${bracket('M72 168 V96 H144')}
  ${bracket('M368 96 H440 V168')}
  ${bracket('M440 344 V416 H368')}
  ${bracket('M144 416 H72 V344')}
  <path d="M104 256 C 160 168, 352 168, 408 256 C 352 344, 160 344, 104 256 Z" fill="#ffffff"/>
  <circle cx="256" cy="256" r="66" fill="${BLUE}"/>
  <circle cx="256" cy="256" r="30" fill="${NAVY}"/>
  <circle cx="278" cy="234" r="12" fill="#ffffff"/>
</g>`;
}

/** `rounded`: a rounded square with transparent corners (browsers, favicons); else full bleed (maskable, iOS). */
function svg(opts: { rounded: boolean; scale: number }): string {
  const bg = opts.rounded ? `<rect width="512" height="512" rx="112" fill="${NAVY}"/>` : `<rect width="512" height="512" fill="${NAVY}"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512" width="512" height="512">\n<title>Lookout</title>\n${bg}\n${artwork(opts.scale)}\n</svg>\n`;
}

async function png(source: string, size: number, file: string): Promise<void> {
  await sharp(Buffer.from(source), { density: 72 * (size / 512) * 2 })
    .resize(size, size)
    .png({ compressionLevel: 9, palette: true, quality: 90 })
    .toFile(path.join(OUT, file));
}

fs.mkdirSync(OUT, { recursive: true });
const plain = svg({ rounded: true, scale: 1 });
// Maskable: the platform crops to a circle or squircle of at least the inner 80 %, so the drawing shrinks
// to sit inside that safe zone (corner brackets at 0.72 stay within a radius of 205 of 512).
const maskable = svg({ rounded: false, scale: 0.72 });
// iOS fills transparent corners with black and rounds the icon itself: full bleed, slightly smaller drawing.
const apple = svg({ rounded: false, scale: 0.86 });

fs.writeFileSync(path.join(OUT, 'icon.svg'), plain);
await png(plain, 192, 'icon-192.png');
await png(plain, 512, 'icon-512.png');
await png(maskable, 512, 'maskable-512.png');
await png(maskable, 192, 'maskable-192.png');
await png(apple, 180, 'apple-touch-icon.png');
for (const f of fs.readdirSync(OUT).sort()) console.log(`${f}\t${fs.statSync(path.join(OUT, f)).size} bytes`);
