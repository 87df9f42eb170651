import type { SecureContext, Server as TlsServer, TLSSocket, TlsOptions } from 'node:tls';
import type { ListenerCertificates } from '../config/tls-settings.js';
import type { Logger } from '../logger.js';
import { CertificateFileSource } from './certificate-file-source.js';
import { CertificateStore } from './certificate-store.js';
import type { CertificateFeed } from './certificate-feed.js';
import { ACME_TLS_PROTOCOL, type ChallengeResponder } from './challenge-responder.js';
import { ManagedCertificateSource } from './managed-certificate-source.js';
import { TLS_POLICY } from './tls-policy.js';

/**
 * TLS for one listener (PORT or ADMIN_PORT): its certificate store, fed from files that are
 * watched, the options a TLS server is made with, and the HSTS value its answers carry.
 */
export interface ListenerTls {
  readonly store: CertificateStore;
  /**
   * For `https.createServer` or `http2.createSecureServer`: the policy, the default pair, SNI
   * selection, and, with ACME, an ALPN callback choosing among `protocols` (the server's
   * application protocols in its order of preference: `['http/1.1']` for node:https, `['h2',
   * 'http/1.1']` for an HTTP/2 server that allows HTTP/1.1) unless the client offers `acme-tls/1`.
   * Without ACME the server offers its own protocols (node:https and node:http2 set `ALPNProtocols`).
   */
  serverOptions(protocols: readonly string[]): TlsOptions;
  /** `Strict-Transport-Security` of every answer (RFC 6797 §7.1); undefined: not sent. */
  readonly hsts: string | undefined;
  /**
   * Keeps `server`'s own context (the one a handshake without SNI gets) on the store's default:
   * `setSecureContext` on each change, which open connections do not notice.
   */
  attach(server: TlsServer): void;
  /** Stops watching the files and following ACME's certificates. */
  close(): void;
}

/** Certificates by ACME on a listener (design.md §4.15). */
export interface ListenerAcme {
  /** The certificates ACME keeps. */
  feed: CertificateFeed;
  /** TLS-ALPN-01 challenges, answered in the handshake (RFC 8737). */
  challenges: ChallengeResponder;
  /** The listener's own host (PUBLIC_URL's, ADMIN_URL's), whose certificate is the default when no TLS_CERT_FILE is. */
  ownHost: string;
}

/** Sockets whose client offered `acme-tls/1`, marked by the ALPN callback and read by the SNI callback, which runs after it. */
const offersAcmeTls = new WeakSet<TLSSocket>();

/**
 * Loads `certificates` and watches them ({@link CertificateFileSource}).
 *
 * Session resumption is on, by tickets (RFC 8446 §2.2; RFC 5077 for TLS 1.2), Node's default.
 * Each server makes its own random ticket keys when created and keeps them for its life (a new
 * default certificate keeps them too): nothing writes them anywhere, and the PROXY_WORKERS
 * cluster workers of one proxy process do not share them, so a client resumes with the worker that
 * issued its ticket and gets a full handshake from another (the primary hands connections round
 * robin).
 *
 * With `acme` (certificates by ACME, design.md §4.15), its certificates join the files' (which win
 * for the names they have; ACME's own host is the default when no TLS_CERT_FILE is) and a
 * handshake offering `acme-tls/1` gets the TLS-ALPN-01 challenge certificate of its name (RFC 8737
 * §3), never another: Node calls the ALPN callback before the SNI callback, both on the socket.
 * @throws when the default pair is unreadable or broken, or TLS_CERTS_DIR cannot be listed (named).
 */
export function openListenerTls(certificates: ListenerCertificates, hsts: string | undefined, logger: Logger, acme?: ListenerAcme): ListenerTls {
  const store = new CertificateStore();
  const source = new CertificateFileSource(certificates, store, logger);
  const managed = acme && new ManagedCertificateSource(acme.feed, store, { ownHost: certificates.defaultPair === undefined ? acme.ownHost : undefined, logger });
  if (store.default === undefined && store.named.size === 0 && !acme) logger.warn({ directory: certificates.directory }, 'TLS_CERTS_DIR holds no certificate yet: every handshake is refused until one arrives');
  const initial = store.default?.pair;
  const serverOptions = (served: readonly string[]): TlsOptions => ({
    ...TLS_POLICY,
    ...(initial && { cert: initial.cert, key: initial.key }),
    // A name without a certificate of its own gets the default, or, without one, no handshake:
    // the gateway never presents a certificate for a name it was not given one for.
    SNICallback(this: TLSSocket | undefined, servername: string, callback: (error: Error | null, context?: SecureContext) => void) {
      if (acme && this && offersAcmeTls.has(this)) return answerAlpnChallenge(acme.challenges, servername, callback);
      const certificate = store.select(servername);
      if (certificate === undefined) callback(new Error('no certificate for the name asked for'));
      else callback(null, certificate.context);
    },
    ...(acme && {
      ALPNCallback(this: TLSSocket | undefined, { protocols }: { servername: string; protocols: string[] }) {
        if (protocols.includes(ACME_TLS_PROTOCOL)) {
          if (this) offersAcmeTls.add(this);
          return ACME_TLS_PROTOCOL;
        }
        return served.find((protocol) => protocols.includes(protocol));
      },
    }),
  });
  let detach: (() => void) | undefined;
  return {
    store,
    serverOptions,
    hsts,
    attach(server) {
      detach = store.onDefaultChange(({ pair }) => server.setSecureContext({ ...TLS_POLICY, cert: pair.cert, key: pair.key }));
    },
    close() {
      detach?.();
      source.close();
      managed?.close();
    },
  };
}

/** The TLS-ALPN-01 challenge certificate for `servername`, or a failed handshake when none is under way. */
function answerAlpnChallenge(challenges: ChallengeResponder, servername: string, callback: (error: Error | null, context?: SecureContext) => void): void {
  challenges.alpnContext(servername).then(
    (context) => (context === undefined ? callback(new Error('no acme-tls/1 challenge for the name asked for')) : callback(null, context)),
    (error: Error) => callback(error),
  );
}
