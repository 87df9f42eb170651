import type { EventBus } from '../../shared/backends/event-bus.js';
import type { AcmeChallengeSet, AlpnChallengeCertificate } from '../../shared/tls/acme-messages.js';

/**
 * The challenges the admin process's orders have under way (design.md §4.15), published whole on
 * the event bus after each change, so that every listener of the fleet answers them: HTTP-01 key
 * authorizations by token, TLS-ALPN-01 certificates by host. A challenge is put up before the CA
 * is told to validate it and taken down once the CA has answered.
 */
export class ChallengeBoard {
  readonly #bus: Pick<EventBus, 'publishAcmeChallenges'>;
  readonly #http01 = new Map<string, string>();
  readonly #tlsAlpn01 = new Map<string, AlpnChallengeCertificate>();

  constructor(bus: Pick<EventBus, 'publishAcmeChallenges'>) {
    this.#bus = bus;
  }

  /**
   * Puts up an HTTP-01 answer; resolves once every listener can read it, with its removal.
   * @throws {RedisUnavailableError} when the bus cannot take it (the order fails and is retried).
   */
  async putHttp01(token: string, keyAuthorization: string): Promise<() => Promise<void>> {
    this.#http01.set(token, keyAuthorization);
    await this.#publish();
    return () => {
      this.#http01.delete(token);
      return this.#publish();
    };
  }

  /** Puts up a TLS-ALPN-01 certificate for `host`; as {@link putHttp01}. */
  async putTlsAlpn01(host: string, certificate: AlpnChallengeCertificate): Promise<() => Promise<void>> {
    this.#tlsAlpn01.set(host, certificate);
    await this.#publish();
    return () => {
      this.#tlsAlpn01.delete(host);
      return this.#publish();
    };
  }

  #publish(): Promise<void> {
    const challenges: AcmeChallengeSet = { http01: Object.fromEntries(this.#http01), tlsAlpn01: Object.fromEntries(this.#tlsAlpn01) };
    return this.#bus.publishAcmeChallenges(challenges);
  }
}
