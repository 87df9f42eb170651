import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/**
 * TRUST_PROXY, compiled once (proxy-addr): the peers whose `X-Forwarded-For` and
 * `X-Forwarded-Proto` are believed. Used by the client-address resolver and by the forwarding
 * headers, which must agree on who is trusted.
 */
export class TrustedProxies {
  /** Nobody is trusted: the socket's peer is the client. */
  static readonly NONE = new TrustedProxies([]);

  /** TRUST_PROXY's entries as given (addresses, CIDRs, or proxy-addr names such as `loopback`). */
  readonly entries: readonly string[];
  readonly #trust: (address: string, hop: number) => boolean;

  /** @throws {TypeError} when an entry is not an address, a CIDR or a proxy-addr name. */
  constructor(entries: readonly string[]) {
    this.entries = entries;
    this.#trust = entries.length === 0 ? () => false : proxyAddr.compile([...entries]);
  }

  /** Whether any peer is trusted at all. */
  get any(): boolean {
    return this.entries.length > 0;
  }

  /** Whether the peer at `address` is a trusted proxy. */
  trusts(address: string): boolean {
    return this.#trust(address, 0);
  }

  /**
   * The request's client address: the socket's peer, or, from a trusted peer, `X-Forwarded-For`
   * walked right to left to the first untrusted hop.
   */
  clientAddress(req: IncomingMessage): string {
    return this.any ? proxyAddr(req, this.#trust) : (req.socket.remoteAddress ?? '');
  }
}
