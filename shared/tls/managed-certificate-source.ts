import { describeError } from '../error-code.js';
import type { Logger } from '../logger.js';
import type { CertificateFeed, ManagedCertificates } from './certificate-feed.js';
import { samePair } from './certificate-files.js';
import type { CertificateStore, StoredCertificate } from './certificate-store.js';
import { selfSignedCertificate } from './self-signed-certificate.js';
import { secureContextOf, type CertificatePair } from './tls-policy.js';

export interface ManagedCertificateOptions {
  /**
   * The listener's own host (PUBLIC_URL's, ADMIN_URL's): its certificate is also the default, for
   * clients that send no SNI; undefined: the default is the files' (TLS_CERT_FILE).
   */
  ownHost: string | undefined;
  logger: Logger;
}

/**
 * Feeds a {@link CertificateStore} with the certificates ACME keeps (design.md §4.15), as a
 * {@link CertificateFeed} announces them: each new pair gets a secure context (an unchanged one
 * keeps its own), swapped in whole, so handshakes from then on get the renewed certificate and
 * open connections keep theirs. A host without a certificate yet (and the listener's own host
 * when ACME cannot name it: an IP address, `localhost`) gets a self-signed stand-in made in this
 * process, logged once per host, until its certificate arrives.
 */
export class ManagedCertificateSource {
  readonly #store: CertificateStore;
  readonly #options: ManagedCertificateOptions;
  readonly #unsubscribe: () => void;
  #latest: ManagedCertificates = new Map();
  #standIns = new Map<string, StoredCertificate>();
  readonly #making = new Set<string>();

  constructor(feed: CertificateFeed, store: CertificateStore, options: ManagedCertificateOptions) {
    this.#store = store;
    this.#options = options;
    this.#unsubscribe = feed.onCertificates((certificates) => {
      this.#latest = certificates;
      this.#apply();
    });
    if (options.ownHost !== undefined) this.#apply();
  }

  /** Stops following the feed; the store keeps what it has. */
  close(): void {
    this.#unsubscribe();
  }

  /** Puts the latest set in the store: issued pairs, else stand-ins (made in the background, applied when ready). */
  #apply(): void {
    const hosts = new Map<string, CertificatePair | null>(this.#latest);
    const own = this.#options.ownHost;
    if (own !== undefined && !hosts.has(own)) hosts.set(own, null);
    const next = new Map<string, StoredCertificate>();
    for (const [host, pair] of hosts) {
      const certificate = pair === null ? this.#standIn(host) : this.#issued(host, pair);
      if (certificate !== undefined) next.set(host, certificate);
    }
    this.#standIns = new Map([...this.#standIns].filter(([host]) => hosts.get(host) === null));
    this.#store.replaceManaged(next);
    const ownCertificate = own === undefined ? undefined : next.get(own);
    if (ownCertificate !== undefined && ownCertificate !== this.#store.default) this.#store.replaceDefault(ownCertificate);
  }

  /** `pair`'s certificate: the one in the store when unchanged; a pair that makes no context is logged and the previous one kept. */
  #issued(host: string, pair: CertificatePair): StoredCertificate | undefined {
    const previous = this.#store.managed.get(host);
    if (previous !== undefined && samePair(previous.pair, pair)) return previous;
    try {
      return { pair, context: secureContextOf(pair) };
    } catch (error) {
      this.#options.logger.warn({ host, err: describeError(error) }, 'certificate by ACME not served: it makes no secure context; the previous one is kept');
      return previous;
    }
  }

  /** The stand-in of `host`, when made; otherwise starts making it (once) and returns undefined. */
  #standIn(host: string): StoredCertificate | undefined {
    const made = this.#standIns.get(host);
    if (made !== undefined || this.#making.has(host)) return made;
    this.#making.add(host);
    selfSignedCertificate(host)
      .then((pair) => {
        this.#standIns.set(host, { pair, context: secureContextOf(pair) });
        this.#options.logger.warn({ host }, 'no certificate by ACME for this host yet: serving a self-signed one until it arrives');
        this.#apply();
      })
      .catch((error: unknown) => this.#options.logger.error({ host, err: describeError(error) }, 'cannot make a self-signed certificate'))
      .finally(() => this.#making.delete(host));
    return undefined;
  }
}
