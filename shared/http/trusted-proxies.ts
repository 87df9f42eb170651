import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';
import { forwardedForHops, hopAddress, unmapIpv4, xForwardedForHops } from './forwarded-address.js';

/**
 * TRUST_PROXY, compiled once (proxy-addr): the peers whose `X-Forwarded-For` (or `Forwarded`) and
 * `X-Forwarded-Proto` are believed. Used by the client-address resolver and by the forwarding
 * headers, which must agree on who is trusted and on the hops believed (design.md §5 "client IP").
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
   * The hops a request is believed to have come through, farthest first, each a bare IP address
   * (forwarded-address.ts), the socket's peer last. From a trusted peer, the hops it reports in
   * `X-Forwarded-For`, or, without that field, in `Forwarded`'s `for=` values (RFC 7239 §5.2);
   * from any other peer, the peer alone. A reported hop that names no IP address (`unknown`,
   * `_hidden`, junk) ends what is believed: the hops start after the rightmost such one, as if it
   * had never been reported, so with nothing valid after it the peer stands alone.
   */
  hops(req: IncomingMessage): string[] {
    const peer = req.socket.remoteAddress ?? '';
    if (!this.any || peer === '' || !this.trusts(peer)) return [unmapIpv4(peer)];
    const reported = reportedHops(req.headers);
    const hops = [unmapIpv4(peer)];
    for (let i = reported.length - 1; i >= 0; i--) {
      const address = hopAddress(reported[i] ?? '');
      if (address === undefined) break;
      hops.push(address);
    }
    return hops.reverse();
  }

  /**
   * The request's client address: of its {@link hops}, walked from the peer towards the farthest,
   * the first that is not a trusted proxy, or the farthest when every one is (as proxy-addr walks).
   */
  clientAddress(req: IncomingMessage): string {
    if (!this.any) return unmapIpv4(req.socket.remoteAddress ?? '');
    const hops = this.hops(req);
    for (let i = hops.length - 1; i > 0; i--) {
      if (!this.#trust(hops[i]!, hops.length - 1 - i)) return hops[i]!;
    }
    return hops[0]!;
  }
}

/** The hops a trusted peer reports, as written: `X-Forwarded-For`'s when it sent one, else `Forwarded`'s. */
function reportedHops(headers: IncomingHttpHeaders): Array<string | undefined> {
  const forwardedFor = fieldValue(headers['x-forwarded-for']);
  if (forwardedFor !== undefined) return xForwardedForHops(forwardedFor);
  const forwarded = fieldValue(headers.forwarded);
  return forwarded === undefined ? [] : forwardedForHops(forwarded);
}

/** A field's value as Node gives it (its lines joined with `, `; typed as possibly a list). */
function fieldValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
