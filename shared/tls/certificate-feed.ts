import type { CertificatePair } from './tls-policy.js';

/**
 * The hosts whose certificates ACME keeps (design.md §4.15), each with its current pair (chain and
 * key, PEM), or null while its first certificate has not arrived.
 */
export type ManagedCertificates = ReadonlyMap<string, CertificatePair | null>;

/**
 * Where a listener learns the certificates ACME keeps: in-process from the admin process's
 * manager (the embedded gateway, the admin listener), or fetched from the admin process on each
 * notice over the event bus (a split-mode proxy: fetched-certificate-feed.ts).
 */
export interface CertificateFeed {
  /**
   * Calls `listener` with the current set now, when one is known, and after every change (a host
   * added or removed, a certificate issued or renewed). Returns a function that unsubscribes.
   */
  onCertificates(listener: (certificates: ManagedCertificates) => void): () => void;
}

/**
 * A {@link CertificateFeed} handed out before its source exists (a listener opened before the
 * plane that keeps the certificates): it passes on what the source given to {@link connect} says.
 */
export class CertificateRelay implements CertificateFeed {
  readonly #listeners = new Set<(certificates: ManagedCertificates) => void>();
  #latest: ManagedCertificates | undefined;

  onCertificates(listener: (certificates: ManagedCertificates) => void): () => void {
    this.#listeners.add(listener);
    if (this.#latest !== undefined) listener(this.#latest);
    return () => this.#listeners.delete(listener);
  }

  /** Follows `source` from now on; returns the function that stops it. */
  connect(source: CertificateFeed): () => void {
    return source.onCertificates((certificates) => {
      this.#latest = certificates;
      for (const listener of this.#listeners) listener(certificates);
    });
  }
}
