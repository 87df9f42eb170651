import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Backends } from '../../shared/backends/backends.js';
import { clientIpResolver } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import { drain, listen, type GatewayServer } from '../../shared/http/http-server.js';
import { createHttpsRedirectServer } from '../../shared/tls/https-redirect.js';
import { openListenerTls, type ListenerAcme } from '../../shared/tls/listener-tls.js';
import type { CertificateFeed } from '../../shared/tls/certificate-feed.js';
import { ChallengeResponder } from '../../shared/tls/challenge-responder.js';
import { FetchedCertificateFeed } from '../../shared/tls/fetched-certificate-feed.js';
import type { Logger } from '../../shared/logger.js';
import { meteredSink, type GatewayMetrics } from '../pipeline/gateway-metrics.js';
import { createProxyPlane, type ProxyPlane } from '../pipeline/proxy-plane.js';
import { createPublicServer, type PublicServer } from './public-server.js';
import { closeInOrder } from '../../shared/close-in-order.js';
import { openSpanExport, type SpanExport } from '../../shared/tracing/span-export.js';
import { registerSpanExportMetrics } from '../../shared/tracing/span-export-metrics.js';

export interface ProxyPlaneOptions {
  config: Config;
  /** Registry snapshots, sessions, the general rate limit and the access-log sink. */
  backends: Backends;
  /**
   * Serves the gateway-owned paths: the admin plane of this process (embedded), or the hand-off
   * to the admin process (split mode).
   */
  adminPlane: (req: IncomingMessage, res: ServerResponse) => void;
  /** Counts requests and target failures; its owner serves its registry on an internal port. */
  metrics: GatewayMetrics;
  logger: Logger;
  /**
   * With ACME on (design.md §4.15), where this process learns the certificates ACME keeps: the
   * admin plane of this process (embedded); unset, they are fetched from the admin process on each
   * notice over the event bus (split mode).
   */
  certificates?: CertificateFeed;
  /**
   * The process's span export (design.md §3.10) when it has one already (the embedded process's,
   * shared with its admin plane); unset, the plane opens its own while OTEL_TRACES_EXPORTER is on.
   */
  spanExport?: SpanExport;
}

/** A data plane serving PORT. */
export interface RunningProxyPlane {
  /** The port bound (PORT, or the one picked when PORT is 0). */
  readonly port: number;
  /** The port HTTP_PORT's redirect to https bound (undefined: HTTP_PORT unset). */
  readonly httpPort: number | undefined;
  readonly server: PublicServer;
  /**
   * Stops accepting, finishes in-flight requests (up to 10 s; tunnels are closed at once), closes
   * the upstream pools, then closes the access-log sink: it ships what it holds, trying for up to
   * 5 s while the pipeline is down, then drops and counts the rest. Never rejects.
   */
  close(): Promise<void>;
}

/**
 * Starts the data plane (design.md §3) on the public listener at PORT over `backends`; resolves once
 * it listens. Every finished request is one access-log record and one observation in `metrics`.
 * With TLS files PORT speaks HTTPS, and with HTTP_PORT a plain listener redirects there (design.md
 * §4.14); this process loads and watches the files itself (each cluster worker too). With ACME on
 * (design.md §4.15) PORT serves ACME's certificates too, and both listeners answer the challenges
 * under way: HTTP-01 on either, TLS-ALPN-01 on PORT.
 * @throws when PORT or HTTP_PORT cannot be bound (the message names it), or a TLS file is broken
 * (named by its variable).
 */
export async function startProxyPlane(options: ProxyPlaneOptions): Promise<RunningProxyPlane> {
  const { config, backends, metrics } = options;
  const { tls: tlsSettings } = config;
  const acme = tlsSettings.public?.acme ? acmeOnPort(options) : undefined;
  const tls = tlsSettings.public && openListenerTls(tlsSettings.public, tlsSettings.hsts, options.logger, acme);
  const accessLog = backends.accessLogSink();
  const ownSpans = options.spanExport ? undefined : openSpanExport(config.tracing, 'gatehouse-proxy', options.logger);
  const spanExport = options.spanExport ?? ownSpans;
  if (ownSpans) registerSpanExportMetrics(metrics.registry, ownSpans.counts);
  const plane = createProxyPlane({
    ...backends,
    config,
    accessLog: meteredSink(accessLog, metrics),
    upstreamFailures: metrics,
    refusals: metrics,
    clientIp: clientIpResolver(config.trustProxy),
    adminPlane: options.adminPlane,
    logger: options.logger,
    spanExport,
  });
  metrics.trackTargets(plane.targetHealth);
  const server = createPublicServer(acme ? answeringHttp01(plane, acme.challenges) : plane, tls, config.h2c);
  const redirect = tlsSettings.httpPort === undefined ? undefined : createHttpsRedirectServer([config.publicUrl, ...(config.adminUrl ? [config.adminUrl] : [])], acme?.challenges);
  const redirecting = redirect && { close: () => drain(redirect) };
  try {
    const port = await listenNamed(server.server, config.port, 'PORT');
    const httpPort = redirect && (await listenNamed(redirect, tlsSettings.httpPort!, 'HTTP_PORT'));
    return { port, httpPort, server, close: () => closeInOrder(server, redirecting, tls, acme, plane, accessLog, ownSpans && { close: () => ownSpans.shutdown() }) };
  } catch (error) {
    await closeInOrder(server, tls, acme, ownSpans && { close: () => ownSpans.shutdown() }); // the caller stops the rest (embedded-gateway.ts, a process's exit)
    throw error;
  }
}

/** PORT's part in certificates by ACME: the feed given (embedded) or one fetching from the admin process, and the challenges over the bus. */
function acmeOnPort(options: ProxyPlaneOptions): ListenerAcme & { close(): void } {
  const { config, backends, logger } = options;
  const fetched = options.certificates ? undefined : new FetchedCertificateFeed(backends.bus, config.adminInternalUrl, logger.child({ component: 'acme' }));
  const challenges = new ChallengeResponder(backends.bus);
  return {
    feed: options.certificates ?? fetched!,
    challenges,
    ownHost: config.publicUrl.hostname,
    close() {
      challenges.close();
      fetched?.close();
    },
  };
}

/** `plane` with HTTP-01 answers in front (a CA may validate on PORT when it follows a redirect there: RFC 8555 §8.3). */
function answeringHttp01(plane: ProxyPlane, challenges: ChallengeResponder): ProxyPlane {
  return { handle: challenges.http01(plane.handle), handleContinue: plane.handleContinue, targetHealth: plane.targetHealth, close: () => plane.close() };
}

/** {@link listen}, its error naming the variable of the port. */
function listenNamed(server: GatewayServer, port: number, variable: string): Promise<number> {
  return listen(server, port).catch((error: Error) => {
    throw new Error(`${variable} ${port}: ${error.message}`, { cause: error });
  });
}
