/**
 * A gateway with tracing on for the data plane's tracing tests (not a test file itself), in either
 * topology: the embedded gateway, or split mode (Redis, an admin process and two proxy processes),
 * exporting its spans to a real OTLP/HTTP receiver (otlp-trace-receiver.ts), an echo upstream
 * behind the services a test registers. Settings are the operator's variables (README "Tracing"):
 * OTEL_TRACES_EXPORTER=otlp and OTEL_TRACES_SAMPLER=always_on unless the test's `env` says otherwise.
 */
import { request } from 'undici';
import { apiClient, createService, type ApiCall } from './api-client.js';
import { eventually } from './eventually.js';
import { startTestGateway, type TestGateway } from './gateway.js';
import { OtlpTraceReceiver } from './otlp-trace-receiver.js';
import { signIn, type SignedIn } from './sessions.js';
import { startSplitGateway, type SplitGateway } from './split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from './upstream.js';

export type Topology = 'embedded' | 'split';
export const TOPOLOGIES: readonly Topology[] = ['embedded', 'split'];

/** One public listener and the process behind it. */
export interface TracedListener {
  /** `http://127.0.0.1:<port>`: where requests are proxied. */
  origin: string;
  /** Its process's `/metrics` (the embedded admin port's, a proxy's INTERNAL_PORT's). */
  metricsUrl: string;
  /** What its process logged so far, warnings and up (JSON lines). */
  logs(): string;
}

export interface TracedGateway {
  topology: Topology;
  receiver: OtlpTraceReceiver;
  upstream: EchoUpstream;
  /** The public listeners: one embedded, the two proxies split. */
  listeners: TracedListener[];
  /** An administrator's session, for the admin API. */
  admin: SignedIn;
  /** A client of the admin API (the first gateway's, embedded): `call('PATCH', path, { as: admin, json })`. */
  call: ApiCall;
  /** A session of the public origin (every listener's, split; the first's, embedded). */
  signIn(user?: Parameters<SplitGateway['signIn']>[0]): Promise<SignedIn>;
  /**
   * Registers a service through the admin API and waits until every listener (those added later
   * too) answers `probe` under its path with something other than 404; resolves with its id.
   */
  createService(fields: Record<string, unknown>, probe?: string): Promise<string>;
  /**
   * Another listener with `env` on top of the gateway's settings, serving the same services: a
   * third proxy process (split), or a second embedded gateway with services of its own registered
   * alike (sessions are then the first gateway's alone). Stopped by {@link close}.
   */
  addListener(env: Record<string, string>): Promise<TracedListener>;
  /** Stops the gateway (its span export sends what it holds), then the receiver and the upstream; a second call waits for the first. */
  close(): Promise<void>;
}

/** What the topologies do differently. */
interface Parts {
  listeners: TracedListener[];
  admin: SignedIn;
  apiUrl: string;
  signIn(user?: Parameters<SplitGateway['signIn']>[0]): Promise<SignedIn>;
  /** Another listener with `env` on top, and how it registers a service (undefined: the first's registration serves it). */
  addListener(env: Record<string, string>): Promise<{ listener: TracedListener; register?: (fields: Record<string, unknown>) => Promise<void> }>;
  close(): Promise<void>;
}

/** The tracing settings of every test: the receiver, and every request sampled. */
export const tracingEnv = (receiver: OtlpTraceReceiver): Record<string, string> => ({
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_TRACES_SAMPLER: 'always_on',
});

/**
 * Starts the receiver, the echo upstream and the gateway in `topology` with `env` over
 * {@link tracingEnv}. @throws when a part fails to start (what started is stopped first).
 */
export async function startTracedGateway(topology: Topology, env: Record<string, string> = {}): Promise<TracedGateway> {
  const [receiver, upstream] = await Promise.all([OtlpTraceReceiver.start(), startEchoUpstream()]);
  const settings = { ...tracingEnv(receiver), ...env };
  let parts: Parts;
  try {
    parts = topology === 'split' ? await split(settings) : await embedded(settings);
  } catch (error) {
    await Promise.all([receiver.close(), upstream.close()]);
    throw error;
  }
  const registrations: Array<Record<string, unknown>> = [];
  const registrars: Array<(fields: Record<string, unknown>) => Promise<void>> = [];
  const probes: string[] = [];
  const listeners = [...parts.listeners];
  let closing: Promise<void> | undefined;
  const routed = (listener: TracedListener, probe: string) =>
    eventually(`${probe} routed on ${listener.origin}`, async () => (await statusOf(listener.origin + probe)) !== 404, 20_000);
  return {
    topology,
    receiver,
    upstream,
    listeners,
    admin: parts.admin,
    call: apiClient(parts.apiUrl),
    signIn: (user) => parts.signIn(user),
    async createService(fields, probe = `${String(fields.path ?? '/')}/`.replace('//', '/')) {
      const id = await createService(parts.apiUrl, parts.admin, fields);
      registrations.push(fields);
      probes.push(probe);
      for (const register of registrars) await register(fields);
      for (const listener of listeners) await routed(listener, probe);
      return id;
    },
    async addListener(extra) {
      const { listener, register } = await parts.addListener(extra);
      if (register) {
        registrars.push(register);
        for (const fields of registrations) await register(fields);
      }
      for (const probe of probes) await routed(listener, probe);
      listeners.push(listener);
      return listener;
    },
    close() {
      closing ??= (async () => {
        await parts.close();
        await Promise.all([receiver.close(), upstream.close()]);
      })();
      return closing;
    },
  };
}

/** A counter's value in `listener`'s `/metrics` (0 when absent: a counter not yet incremented may not be listed). */
export async function counterOf(listener: TracedListener, name: string): Promise<number> {
  const text = await (await request(listener.metricsUrl)).body.text();
  const match = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

async function statusOf(url: string): Promise<number> {
  const response = await request(url, { headers: { accept: 'application/json' } });
  await response.body.dump();
  return response.statusCode;
}

/** One embedded gateway with `env`, its warnings kept. */
async function embeddedGateway(env: Record<string, string>): Promise<{ gw: TestGateway; listener: TracedListener }> {
  let logs = '';
  const gw = await startTestGateway({ LOG_LEVEL: 'warn', ...env }, { onLog: (line) => (logs += line) });
  return { gw, listener: { origin: gw.origin, metricsUrl: `${gw.adminUrl}/metrics`, logs: () => logs } };
}

async function embedded(env: Record<string, string>): Promise<Parts> {
  const { gw, listener } = await embeddedGateway(env);
  const others: TestGateway[] = [];
  return {
    listeners: [listener],
    admin: await signIn(gw),
    apiUrl: gw.origin,
    signIn: (user) => signIn(gw, user),
    async addListener(extra) {
      const other = await embeddedGateway({ ...env, ...extra });
      others.push(other.gw);
      const admin = await signIn(other.gw);
      return { listener: other.listener, register: async (fields) => void (await createService(other.gw.origin, admin, fields)) };
    },
    async close() {
      await Promise.all([gw, ...others].map((one) => one.close()));
    },
  };
}

async function split(env: Record<string, string>): Promise<Parts> {
  const gateway = await startSplitGateway(env);
  const asListener = (proxy: SplitGateway['proxies'][number]): TracedListener => ({ origin: proxy.url, metricsUrl: `${proxy.internalUrl}/metrics`, logs: () => proxy.process.output() });
  const added: Array<SplitGateway['proxies'][number]> = [];
  return {
    listeners: gateway.proxies.map(asListener),
    admin: await gateway.signIn(),
    apiUrl: gateway.adminUrl,
    signIn: (user) => gateway.signIn(user),
    async addListener(extra) {
      const proxy = await gateway.startProxy(extra);
      added.push(proxy);
      return { listener: asListener(proxy) };
    },
    async close() {
      await Promise.all(added.map((proxy) => proxy.process.stop()));
      await gateway.close();
    },
  };
}
