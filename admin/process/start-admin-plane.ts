import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { clientIpResolver } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import { createGatewayServer, drain, listen } from '../../shared/http/http-server.js';
import { internalEndpoints } from '../../shared/http/internal-endpoints.js';
import type { Logger } from '../../shared/logger.js';
import { processMetricsRegistry } from '../../shared/process-metrics.js';
import { HANDED_OFF_HEADER_FIELDS, MAX_HEADER_FIELDS } from '../../shared/http/request-head.js';
import { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import { openListenerTls } from '../../shared/tls/listener-tls.js';
import { CertificateRelay, type CertificateFeed } from '../../shared/tls/certificate-feed.js';
import { ChallengeResponder } from '../../shared/tls/challenge-responder.js';
import { certificateFetchEndpoint } from '../acme/certificate-fetch-endpoint.js';
import { registerAcmeMetrics } from '../acme/acme-metrics.js';
import { createAdminPlane } from '../admin-plane.js';
import { registerAccessLogMetrics } from '../access-log/access-log-metrics.js';
import { registerSpanExportMetrics } from '../../shared/tracing/span-export-metrics.js';
import type { AdminTracing } from '../tracing/admin-tracing.js';
import { AdminRequestIdentities } from '../tracing/request-identity.js';
import type { AdminStorage } from './admin-storage.js';

export interface AdminPlaneOptions {
  config: Config;
  /** The database, the access log's threads and the backends (admin-storage.ts). */
  storage: AdminStorage;
  /**
   * The process's tracing (design.md §3.10): the admin process's own span export, or the one the
   * embedded process shares with its data plane. Its counts are served on `/metrics`; its owner
   * closes it after the plane.
   */
  tracing: AdminTracing;
  logger: Logger;
  /**
   * How public requests reach this plane. `in-process`: from the data plane of this process, on
   * the client's own connection (the embedded gateway). `handed-off`: from proxy processes, over
   * loopback or from TRUST_PROXY peers (split mode): their `X-Forwarded-For` is then believed for
   * the client address, and the admin port accepts the fields a hand-off adds to the client's
   * (`HANDED_OFF_HEADER_FIELDS`).
   */
  publicRequests: 'in-process' | 'handed-off';
  /**
   * What `/metrics` on ADMIN_PORT serves: the in-process data plane's registry (embedded), else
   * Node's process metrics only (the admin process: the data plane's series live in the proxies).
   */
  metrics?: Registry;
}

/** An admin plane serving ADMIN_PORT. */
export interface RunningAdminPlane {
  /** The port bound (ADMIN_PORT, or the one picked when it is 0). */
  readonly port: number;
  /** Serves a gateway-owned path of the public origin: the data plane's `adminPlane` in this process. */
  handlePublic(req: IncomingMessage, res: ServerResponse): void;
  /** The certificates ACME keeps (design.md §4.15), for this process's data plane; undefined while ACME is off. */
  readonly certificates: CertificateFeed | undefined;
  /**
   * Stops accepting on ADMIN_PORT, lets in-flight requests finish (up to 10 s), and stops the
   * plane's background work. The storage stays open (its owner closes it after).
   */
  close(): Promise<void>;
}

/**
 * Starts the control plane (design.md §2) on its storage: builds it, publishes the registry,
 * and serves on ADMIN_PORT (at ADMIN_HOST) its API, pages and the internal `/healthz`, `/readyz`
 * (the backends' checks) and `/metrics`. Resolves once it listens. ADMIN_PORT speaks HTTPS when
 * ADMIN_URL is https and TLS files are set (ADMIN_TLS_*, else the public listener's; design.md §4.14).
 * @throws when ADMIN_PORT cannot be bound, or a TLS file is broken (named by its variable).
 */
export async function startAdminPlane(options: AdminPlaneOptions): Promise<RunningAdminPlane> {
  const { config, storage, logger } = options;
  const { backends } = storage;
  const handedOff = options.publicRequests === 'handed-off';
  // First: a broken certificate stops the start before anything runs. ACME's certificates (design.md
  // §4.15) reach the listener through a relay, as the plane that keeps them is made after it.
  const relay = config.tls.admin?.acme ? new CertificateRelay() : undefined;
  const challenges = relay && new ChallengeResponder(backends.bus);
  const acme = relay && challenges && { feed: relay, challenges, ownHost: config.adminUrl!.hostname };
  const tls = config.tls.admin && openListenerTls(config.tls.admin, config.tls.hsts, logger, acme);
  const trusted = handedOff ? new TrustedProxies(['loopback', ...config.trustProxy.entries]) : config.trustProxy;
  const { tracing } = options;
  const clientIp = clientIpResolver(trusted);
  const identities = new AdminRequestIdentities(trusted, clientIp, tracing, config.tracing.trustIncoming);
  const admin = await createAdminPlane({ ...backends, config, db: storage.db, accessLogs: storage.accessLogReads, clientIp, identities, tracing, logger });
  const metrics = options.metrics ?? processMetricsRegistry();
  registerAccessLogMetrics(metrics, () => storage.accessLogWriter.totals);
  if (tracing.spanExport) registerSpanExportMetrics(metrics, tracing.spanExport.counts);
  const certificates = admin.certificates;
  if (certificates) registerAcmeMetrics(metrics, certificates);
  const disconnect = certificates && relay?.connect(certificates);
  const fetchCertificates = certificates ? certificateFetchEndpoint(certificates) : () => false;
  const internal = internalEndpoints({
    checks: backends.readiness,
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.metrics() }),
  });
  const maxHeaderFields = handedOff ? HANDED_OFF_HEADER_FIELDS : MAX_HEADER_FIELDS;
  const server = createGatewayServer((req, res) => internal(req, res) || fetchCertificates(req, res) || admin.handle(req, res), maxHeaderFields, { tls });
  const port = await listen(server, config.adminPort, config.adminHost).catch((error: unknown) => {
    tls?.close();
    challenges?.close();
    throw error;
  });
  return {
    port,
    handlePublic: admin.handlePublic,
    certificates,
    async close() {
      await drain(server);
      tls?.close();
      disconnect?.();
      challenges?.close();
      admin.close();
    },
  };
}
