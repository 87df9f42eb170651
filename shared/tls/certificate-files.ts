import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CertificatePair } from './tls-policy.js';

/** A pair of PEM files on disk: the certificate with its chain, and its key. */
export interface PairFiles {
  certFile: string;
  keyFile: string;
}

/** What a `_wildcard.` file name stands for: `*.` (a name cannot hold `*` on every file system). */
const WILDCARD_FILE_PREFIX = '_wildcard.';

/**
 * The pairs of a TLS_CERTS_DIR by the name each serves: `<name>.crt` with `<name>.key`, `<name>`
 * lowercased, `_wildcard.example.com` read as `*.example.com`. A `.crt` without its `.key` is left
 * out (reported by `onLonely`, with its file).
 * @throws when the directory cannot be listed.
 */
export function pairsInDirectory(directory: string, onLonely: (certFile: string) => void): Map<string, PairFiles> {
  const entries = new Set(readdirSync(directory));
  const pairs = new Map<string, PairFiles>();
  for (const entry of entries) {
    if (!entry.endsWith('.crt')) continue;
    const base = entry.slice(0, -'.crt'.length);
    const certFile = join(directory, entry);
    if (!entries.has(`${base}.key`)) {
      onLonely(certFile);
      continue;
    }
    const lower = base.toLowerCase();
    const name = lower.startsWith(WILDCARD_FILE_PREFIX) ? `*.${lower.slice(WILDCARD_FILE_PREFIX.length)}` : lower;
    pairs.set(name, { certFile, keyFile: join(directory, `${base}.key`) });
  }
  return pairs;
}

/**
 * The two files' bytes, read now.
 * @throws the file system's error (ENOENT, EACCES) for the first that cannot be read.
 */
export function readPairFiles(files: PairFiles): CertificatePair {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

/** Whether two pairs hold the same bytes (an unchanged file needs no new secure context). */
export function samePair(a: CertificatePair, b: CertificatePair): boolean {
  return a.cert.equals(b.cert) && a.key.equals(b.key);
}
