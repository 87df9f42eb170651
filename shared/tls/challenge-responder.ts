import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { SecureContext } from 'node:tls';
import type { EventBus } from '../backends/event-bus.js';
import { NO_CHALLENGES, type AcmeChallengeSet } from './acme-messages.js';
import { secureContextOf } from './tls-policy.js';

/** RFC 8555 §8.3: where an HTTP-01 challenge's key authorization is asked for. */
const HTTP01_PREFIX = '/.well-known/acme-challenge/';

/** RFC 8737 §4: the ALPN protocol a CA offers in a TLS-ALPN-01 validation handshake. */
export const ACME_TLS_PROTOCOL = 'acme-tls/1';

/**
 * Answers the ACME challenges the admin process has under way (design.md §4.15) in this process,
 * from the set the event bus carries (in-process, or over Redis in split mode), so whichever
 * process the CA reaches can answer. A challenge this process does not know is read again from
 * the bus once before giving up: the CA may ask a moment before the notice arrives.
 */
export class ChallengeResponder {
  readonly #bus: Pick<EventBus, 'onAcmeChallenges' | 'refreshAcmeChallenges'>;
  readonly #unsubscribe: () => void;
  #challenges: AcmeChallengeSet = NO_CHALLENGES;
  /** Secure contexts of TLS-ALPN-01 certificates, by the certificate PEM (made once per challenge). */
  #contexts = new Map<string, SecureContext>();

  constructor(bus: Pick<EventBus, 'onAcmeChallenges' | 'refreshAcmeChallenges'>) {
    this.#bus = bus;
    this.#unsubscribe = bus.onAcmeChallenges((challenges) => this.#take(challenges));
  }

  /**
   * `next` with HTTP-01 answers in front (RFC 8555 §8.3): `GET` or `HEAD` of
   * `/.well-known/acme-challenge/<token>` for a token under way gets 200 `text/plain` with its key
   * authorization, on any host and before anything else; every other request (an unknown token
   * too, which an application may answer itself) goes to `next`.
   */
  http01(next: RequestListener): RequestListener {
    return (req, res) => {
      const token = http01Token(req);
      if (token === undefined) return next(req, res);
      const known = this.#challenges.http01[token];
      if (known !== undefined) return answer(res, known);
      void this.#bus.refreshAcmeChallenges().then(() => {
        const fresh = this.#challenges.http01[token];
        if (fresh === undefined) next(req, res);
        else answer(res, fresh);
      });
    };
  }

  /**
   * The secure context of the TLS-ALPN-01 challenge certificate for `servername` (RFC 8737 §3),
   * for a handshake that offered `acme-tls/1`; undefined when no such challenge is under way.
   */
  async alpnContext(servername: string): Promise<SecureContext | undefined> {
    const host = servername.toLowerCase().replace(/\.$/, '');
    if (this.#challenges.tlsAlpn01[host] === undefined) await this.#bus.refreshAcmeChallenges();
    const challenge = this.#challenges.tlsAlpn01[host];
    if (challenge === undefined) return undefined;
    let context = this.#contexts.get(challenge.cert);
    if (context === undefined) {
      context = secureContextOf({ cert: Buffer.from(challenge.cert), key: Buffer.from(challenge.key) });
      this.#contexts.set(challenge.cert, context);
    }
    return context;
  }

  /** Stops following the challenges. */
  close(): void {
    this.#unsubscribe();
  }

  #take(challenges: AcmeChallengeSet): void {
    this.#challenges = challenges;
    const live = new Set(Object.values(challenges.tlsAlpn01).map((challenge) => challenge.cert));
    this.#contexts = new Map([...this.#contexts].filter(([cert]) => live.has(cert)));
  }
}

/** The token of an HTTP-01 request (`GET`/`HEAD` of the challenge path, no query); undefined for any other request. */
function http01Token(req: IncomingMessage): string | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const url = req.url ?? '';
  if (!url.startsWith(HTTP01_PREFIX)) return undefined;
  const token = url.slice(HTTP01_PREFIX.length);
  // RFC 8555 §8.3: a token is base64url.
  return /^[A-Za-z0-9_-]+$/.test(token) ? token : undefined;
}

function answer(res: ServerResponse, keyAuthorization: string): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(keyAuthorization), 'cache-control': 'no-store' });
  res.end(keyAuthorization);
}
