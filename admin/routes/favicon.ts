import { createHash } from 'node:crypto';
import type { Handler } from '../http/request-context.js';

/**
 * The gateway's icon, 16×16: a blue tile with a white gateway arch. `.` is transparent, `#` the
 * pages' accent blue (#2563eb), `o` white. Drawn here and encoded at start, so there is no binary
 * file to ship.
 */
const GLYPH = [
  '.##############.',
  '################',
  '################',
  '######oooo######',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '#####oooooo#####',
  '.####oooooo####.',
];

/** RGBA of each glyph character. */
const COLORS: Record<string, readonly [number, number, number, number]> = {
  '.': [0, 0, 0, 0],
  '#': [0x25, 0x63, 0xeb, 0xff],
  o: [0xff, 0xff, 0xff, 0xff],
};

const ICON = encodeIco(GLYPH);
const ETAG = `"${createHash('sha256').update(ICON).digest('hex').slice(0, 10)}"`;

/**
 * `GET /favicon.ico` while no service takes that path (the data plane hands it over then, see
 * proxy-plane.ts): the icon as `image/x-icon`, cached for a day (not longer: a service registered
 * at `/` later serves its own), with an ETag (304 when it matches).
 */
export const favicon: Handler = ({ req, res }) => {
  const headers = {
    'content-type': 'image/x-icon',
    'cache-control': 'public, max-age=86400',
    etag: ETAG,
    'x-content-type-options': 'nosniff',
  };
  if (req.headers['if-none-match'] === ETAG) {
    res.writeHead(304, headers).end();
    return;
  }
  res.writeHead(200, { ...headers, 'content-length': ICON.length }).end(ICON);
};

/**
 * A square glyph as an ICO file with one 32-bit image: ICONDIR and one ICONDIRENTRY, then a
 * BITMAPINFOHEADER whose height counts the colour rows and the AND mask together, the BGRA rows
 * bottom-up, and the 1-bit AND mask (set where transparent), each mask row padded to 32 bits.
 */
function encodeIco(rows: readonly string[]): Buffer {
  const size = rows.length;
  const maskRowBytes = Math.ceil(size / 32) * 4;
  const pixelBytes = size * size * 4;
  const image = Buffer.alloc(40 + pixelBytes + maskRowBytes * size);
  image.writeUInt32LE(40, 0); // biSize
  image.writeInt32LE(size, 4); // biWidth
  image.writeInt32LE(size * 2, 8); // biHeight: colour rows + mask rows
  image.writeUInt16LE(1, 12); // biPlanes
  image.writeUInt16LE(32, 14); // biBitCount; biCompression 0 (BI_RGB)
  image.writeUInt32LE(image.length - 40, 20); // biSizeImage
  for (let y = 0; y < size; y++) {
    const row = rows[size - 1 - y]!; // bottom-up
    for (let x = 0; x < size; x++) {
      const [r, g, b, a] = COLORS[row[x]!]!;
      image.set([b, g, r, a], 40 + (y * size + x) * 4);
      if (a === 0) image[40 + pixelBytes + y * maskRowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  const header = Buffer.alloc(22);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header[6] = size; // width
  header[7] = size; // height
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18); // offset of the image
  return Buffer.concat([header, image]);
}
