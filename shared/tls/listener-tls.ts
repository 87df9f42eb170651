import type { SecureContext, Server as TlsServer, TlsOptions } from 'node:tls';
import type { ListenerCertificates } from '../config/tls-settings.js';
import type { Logger } from '../logger.js';
import { CertificateFileSource } from './certificate-file-source.js';
import { CertificateStore } from './certificate-store.js';
import { TLS_POLICY } from './tls-policy.js';

/**
 * TLS for one listener (PORT or ADMIN_PORT): its certificate store, fed from files that are
 * watched, the options a TLS server is made with, and the HSTS value its answers carry.
 */
export interface ListenerTls {
  readonly store: CertificateStore;
  /** For `https.createServer` (or a later HTTP/2 server): the policy, the default pair, SNI selection. */
  readonly serverOptions: TlsOptions;
  /** `Strict-Transport-Security` of every answer (RFC 6797 §7.1); undefined: not sent. */
  readonly hsts: string | undefined;
  /**
   * Keeps `server`'s own context (the one a handshake without SNI gets) on the store's default:
   * `setSecureContext` on each change, which open connections do not notice.
   */
  attach(server: TlsServer): void;
  /** Stops watching the files. */
  close(): void;
}

/**
 * Loads `certificates` and watches them ({@link CertificateFileSource}).
 *
 * Session resumption is on, by tickets (RFC 8446 §2.2; RFC 5077 for TLS 1.2), Node's default.
 * Each server makes its own random ticket keys when created and keeps them for its life (a new
 * default certificate keeps them too): nothing writes them anywhere, and the PROXY_WORKERS
 * cluster workers of one proxy process do not share them, so a client resumes with the worker that
 * issued its ticket and gets a full handshake from another (the primary hands connections round
 * robin).
 * @throws when the default pair is unreadable or broken, or TLS_CERTS_DIR cannot be listed (named).
 */
export function openListenerTls(certificates: ListenerCertificates, hsts: string | undefined, logger: Logger): ListenerTls {
  const store = new CertificateStore();
  const source = new CertificateFileSource(certificates, store, logger);
  if (store.default === undefined && store.named.size === 0) logger.warn({ directory: certificates.directory }, 'TLS_CERTS_DIR holds no certificate yet: every handshake is refused until one arrives');
  const initial = store.default?.pair;
  const serverOptions: TlsOptions = {
    ...TLS_POLICY,
    ...(initial && { cert: initial.cert, key: initial.key }),
    // A name without a certificate of its own gets the default, or, without one, no handshake:
    // the gateway never presents a certificate for a name it was not given one for.
    SNICallback: (servername: string, callback: (error: Error | null, context?: SecureContext) => void) => {
      const certificate = store.select(servername);
      if (certificate === undefined) callback(new Error('no certificate for the name asked for'));
      else callback(null, certificate.context);
    },
  };
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
    },
  };
}
