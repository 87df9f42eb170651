import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { GatewayError } from '../../shared/errors.js';
import type { Handler } from '../http/request-context.js';

/** Where the console's browser files live in the repository (plain CSS and JS, not compiled by tsc). */
const SOURCE_DIR = join('admin', 'console', 'assets');
/** uPlot's browser build and stylesheet, served under these names. */
const UPLOT_FILES = { 'uplot.js': 'uplot/dist/uPlot.iife.min.js', 'uplot.css': 'uplot/dist/uPlot.min.css' };
/** URL prefix of every asset; under `/dashboard`, so the data plane already hands it to the admin plane. */
export const ASSET_PREFIX = '/dashboard/assets/';

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

/** One file, read once at start. */
interface Asset {
  body: Buffer;
  gzipped: Buffer;
  contentType: string;
  etag: string;
}

/**
 * The console's static files, served by the admin process itself (the machines have no internet):
 * read once at start, each under a name that carries its content hash (`api.1a2b3c4d5e.js`), so
 * a page always loads the version it was rendered with and browsers may cache them for a year.
 */
export class ConsoleAssets {
  readonly #byHashedName = new Map<string, Asset>();
  readonly #urls = new Map<string, string>();

  /**
   * Reads every file of `admin/console/assets/` (found by walking up from this module, so it works
   * from `dist/` and from the sources) and uPlot's files from `node_modules`.
   * @throws when the folder or a file cannot be read: the console cannot work without them.
   */
  static load(): ConsoleAssets {
    const assets = new ConsoleAssets();
    const sourceDir = findSourceDir();
    for (const name of readdirSync(sourceDir).sort()) {
      if (CONTENT_TYPES[extname(name)]) assets.#add(name, readFileSync(join(sourceDir, name)));
    }
    const require = createRequire(import.meta.url);
    for (const [name, module] of Object.entries(UPLOT_FILES)) assets.#add(name, readFileSync(require.resolve(module)));
    return assets;
  }

  /**
   * The URL of asset `name` (`api.js`, `uplot.css`, …).
   * @throws when there is no such asset (a page names a file that does not exist).
   */
  url(name: string): string {
    const url = this.#urls.get(name);
    if (!url) throw new Error(`no console asset named ${name}`);
    return url;
  }

  /**
   * `GET /dashboard/assets/:file`: the file with `Cache-Control: public, max-age=31536000, immutable`,
   * an ETag (304 when it matches) and gzip when the client accepts it; 404 for an unknown name.
   */
  readonly handler: Handler = ({ req, res, params }) => {
    const asset = this.#byHashedName.get(params.file ?? '');
    if (!asset) throw new GatewayError('NOT_FOUND');
    const headers: Record<string, string | number> = {
      'content-type': asset.contentType,
      'cache-control': 'public, max-age=31536000, immutable',
      etag: asset.etag,
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
    };
    if (req.headers['if-none-match'] === asset.etag) {
      res.writeHead(304, headers).end();
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? asset.gzipped : asset.body;
    if (gzip) headers['content-encoding'] = 'gzip';
    res.writeHead(200, { ...headers, 'content-length': body.length }).end(body);
  };

  #add(name: string, body: Buffer): void {
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 10);
    const extension = extname(name);
    const hashedName = `${name.slice(0, -extension.length)}.${hash}${extension}`;
    this.#byHashedName.set(hashedName, {
      body,
      gzipped: gzipSync(body),
      contentType: CONTENT_TYPES[extension]!,
      etag: `"${hash}"`,
    });
    this.#urls.set(name, ASSET_PREFIX + hashedName);
  }
}

/** The first `admin/console/assets` folder found walking up from this module's folder. */
function findSourceDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, SOURCE_DIR);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`console assets not found: no ${SOURCE_DIR} above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
}
