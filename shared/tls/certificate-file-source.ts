import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import type { ListenerCertificates } from '../config/tls-settings.js';
import { describeError } from '../error-code.js';
import type { Logger } from '../logger.js';
import { pairsInDirectory, readPairFiles, samePair, type PairFiles } from './certificate-files.js';
import type { CertificateStore, StoredCertificate } from './certificate-store.js';
import { secureContextOf } from './tls-policy.js';

/** How often the files are read again whatever fs.watch says, in ms: it misses events on some file systems (NFS, some bind mounts). */
export const RECHECK_INTERVAL_MS = 30_000;
/** Events of one replacement (a write, a rename, a second file) are read as one, this long after the last, in ms. */
const SETTLE_MS = 100;

/**
 * Feeds a {@link CertificateStore} from a listener's PEM files (README "TLS") and keeps it in step
 * with them without a restart: fs.watch on their folders, plus a re-read every
 * {@link RECHECK_INTERVAL_MS}. A pair whose bytes changed gets a new secure context; one that
 * cannot be read or does not make a context (a half-written file, a key of another certificate)
 * is logged at warn and its previous certificate kept; a pair removed from TLS_CERTS_DIR is
 * dropped. Connections already open keep the context they began with.
 */
export class CertificateFileSource {
  readonly #certificates: ListenerCertificates;
  readonly #store: CertificateStore;
  readonly #logger: Logger;
  readonly #watchers: FSWatcher[] = [];
  readonly #recheck: NodeJS.Timeout;
  #settle: NodeJS.Timeout | undefined;

  /**
   * Loads the files into `store` now and starts watching them.
   * @throws when the default pair cannot be read or does not make a secure context (the message
   * names its variables), or TLS_CERTS_DIR cannot be listed: a start with a broken certificate stops.
   */
  constructor(certificates: ListenerCertificates, store: CertificateStore, logger: Logger) {
    this.#certificates = certificates;
    this.#store = store;
    this.#logger = logger;
    const { defaultPair, directory } = certificates;
    if (defaultPair !== undefined) {
      try {
        store.replaceDefault(readPairFiles(defaultPair));
      } catch (error) {
        throw new Error(`${defaultPair.variables}: ${describeError(error).message}`, { cause: error });
      }
    }
    if (directory !== undefined) {
      try {
        this.#loadDirectory(directory, true);
      } catch (error) {
        throw new Error(`TLS_CERTS_DIR: ${describeError(error).message}`, { cause: error });
      }
    }
    this.#watch();
    this.#recheck = setInterval(() => this.reload(), RECHECK_INTERVAL_MS).unref();
  }

  /** Reads every file again and replaces what changed (see the class); never throws. */
  reload(): void {
    const { defaultPair, directory } = this.#certificates;
    if (defaultPair !== undefined) this.#reloadDefault(defaultPair);
    if (directory === undefined) return;
    try {
      this.#loadDirectory(directory, false);
    } catch (error) {
      this.#logger.warn({ directory, err: describeError(error) }, 'TLS_CERTS_DIR cannot be read; its certificates are kept');
    }
  }

  /** Stops watching. */
  close(): void {
    clearInterval(this.#recheck);
    clearTimeout(this.#settle);
    for (const watcher of this.#watchers) watcher.close();
  }

  #reloadDefault(files: PairFiles & { variables: string }): void {
    try {
      const pair = readPairFiles(files);
      const current = this.#store.default;
      if (current !== undefined && samePair(current.pair, pair)) return;
      this.#store.replaceDefault(pair);
      this.#logger.info({ file: files.certFile }, 'TLS certificate reloaded');
    } catch (error) {
      this.#logger.warn({ file: files.certFile, err: describeError(error) }, 'TLS certificate not reloaded: the previous one is kept');
    }
  }

  /** Builds the directory's map anew, reusing the contexts of unchanged pairs; swaps it in when anything changed. */
  #loadDirectory(directory: string, starting: boolean): void {
    const current = this.#store.named;
    const next = new Map<string, StoredCertificate>();
    let changed = false;
    const lonely = (certFile: string) => this.#logger.warn({ file: certFile }, 'TLS certificate without its .key file: not served');
    for (const [name, files] of pairsInDirectory(directory, lonely)) {
      const previous = current.get(name);
      const loaded = this.#loadPair(name, files, previous, starting);
      if (loaded !== undefined) next.set(name, loaded);
      changed ||= loaded !== previous;
    }
    for (const name of current.keys()) {
      if (next.has(name)) continue;
      changed = true;
      this.#logger.info({ name }, 'TLS certificate removed from TLS_CERTS_DIR');
    }
    if (changed) this.#store.replaceNamed(next);
  }

  /** The pair's certificate: `previous` when unchanged or when the files are bad (logged). */
  #loadPair(name: string, files: PairFiles, previous: StoredCertificate | undefined, starting: boolean): StoredCertificate | undefined {
    try {
      const pair = readPairFiles(files);
      if (previous !== undefined && samePair(previous.pair, pair)) return previous;
      const loaded = { pair, context: secureContextOf(pair) };
      if (!starting) this.#logger.info({ name, file: files.certFile }, 'TLS certificate reloaded');
      return loaded;
    } catch (error) {
      const kept = previous === undefined ? 'not served' : 'the previous one is kept';
      this.#logger.warn({ name, file: files.certFile, err: describeError(error) }, `TLS certificate not loaded: ${kept}`);
      return previous;
    }
  }

  /** Watches the folders holding the files (a file replaced by rename is a new inode, which a watch on the file itself would miss). */
  #watch(): void {
    const { defaultPair, directory } = this.#certificates;
    const folders = new Set<string>();
    if (defaultPair !== undefined) folders.add(dirname(defaultPair.certFile)).add(dirname(defaultPair.keyFile));
    if (directory !== undefined) folders.add(directory);
    for (const folder of folders) {
      try {
        const watcher = watch(folder, { persistent: false }, () => this.#scheduleReload());
        watcher.on('error', (error) => this.#logger.warn({ folder, err: describeError(error) }, 'cannot watch TLS files; re-read every 30 s'));
        this.#watchers.push(watcher);
      } catch (error) {
        this.#logger.warn({ folder, err: describeError(error) }, 'cannot watch TLS files; re-read every 30 s');
      }
    }
  }

  #scheduleReload(): void {
    clearTimeout(this.#settle);
    this.#settle = setTimeout(() => this.reload(), SETTLE_MS).unref();
  }
}
