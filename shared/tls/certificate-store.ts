import type { SecureContext } from 'node:tls';
import { secureContextOf, type CertificatePair } from './tls-policy.js';

/** A certificate the store holds: its secure context, and the pair it was made from. */
export interface StoredCertificate {
  readonly pair: CertificatePair;
  readonly context: SecureContext;
}

/**
 * The certificates one listener serves, chosen by the SNI name (RFC 6066 §3), apart from any
 * server so that whatever obtains them (files on disk today, an ACME client later) feeds the same
 * store, and any server (HTTPS today, HTTP/2 later) reads it. Two sets of names: the files'
 * ({@link replaceNamed}) and ACME's ({@link replaceManaged}, design.md §4.15). Names are matched
 * case-insensitively without a trailing dot: an exact name first (the files', then ACME's), then
 * `*.<parent>` for one more label (RFC 6125 §6.4.3: a wildcard stands for exactly one label), then
 * the default. Each replacement swaps a whole map, so a handshake reads one consistent set and
 * connections already open keep theirs.
 */
export class CertificateStore {
  #named = new Map<string, StoredCertificate>();
  #managed = new Map<string, StoredCertificate>();
  #default: StoredCertificate | undefined;
  readonly #defaultListeners = new Set<(certificate: StoredCertificate) => void>();

  /** The certificate for `servername` (undefined: none, not even a default). */
  select(servername: string): StoredCertificate | undefined {
    const name = normalisedName(servername);
    const exact = this.#named.get(name) ?? this.#managed.get(name);
    if (exact !== undefined) return exact;
    const dot = name.indexOf('.');
    return (dot > 0 ? this.#named.get(`*${name.slice(dot)}`) : undefined) ?? this.#default;
  }

  get default(): StoredCertificate | undefined {
    return this.#default;
  }

  /** The named certificates (`app.example.com`, `*.example.com`), as one read-only map. */
  get named(): ReadonlyMap<string, StoredCertificate> {
    return this.#named;
  }

  /**
   * Replaces every named certificate at once (keys lowercased, no trailing dot).
   * @throws when a pair does not make a secure context (see {@link secureContextOf}); nothing changes then.
   */
  replaceNamed(pairs: ReadonlyMap<string, CertificatePair | StoredCertificate>): void {
    const next = new Map<string, StoredCertificate>();
    for (const [name, pair] of pairs) next.set(normalisedName(name), stored(pair));
    this.#named = next;
  }

  /** ACME's certificates, by host (design.md §4.15). */
  get managed(): ReadonlyMap<string, StoredCertificate> {
    return this.#managed;
  }

  /** Replaces every certificate ACME keeps at once (keys lowercased, no trailing dot); the files' names win over these. */
  replaceManaged(certificates: ReadonlyMap<string, StoredCertificate>): void {
    const next = new Map<string, StoredCertificate>();
    for (const [name, certificate] of certificates) next.set(normalisedName(name), certificate);
    this.#managed = next;
  }

  /**
   * Replaces the default certificate and tells the listeners ({@link onDefaultChange}).
   * @throws when the pair does not make a secure context; nothing changes then.
   */
  replaceDefault(pair: CertificatePair | StoredCertificate): void {
    this.#default = stored(pair);
    for (const listener of this.#defaultListeners) listener(this.#default);
  }

  /** Calls `listener` with each new default (a server's own context: `server.setSecureContext`); returns its removal. */
  onDefaultChange(listener: (certificate: StoredCertificate) => void): () => void {
    this.#defaultListeners.add(listener);
    return () => this.#defaultListeners.delete(listener);
  }
}

function stored(pair: CertificatePair | StoredCertificate): StoredCertificate {
  return 'context' in pair ? pair : { pair, context: secureContextOf(pair) };
}

/** `App.Example.COM.` → `app.example.com`. */
function normalisedName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
