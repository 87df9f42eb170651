/**
 * The gateways of the pool tests (test/pools, test/proxy/target-pool-*) and how pool-scenarios.ts
 * sees them: a pool service made through the admin API of a running gateway (embedded or split),
 * with its public listeners, each proxy process's `/metrics` and `GET /api/services/:id/health`;
 * or published straight to a data plane alone. {@link apiPools} and {@link dataPlanePools} give a
 * test file its gateway with the target processes and clients it makes, all closed after it.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { request } from 'undici';
import type { Service } from '../../shared/types.js';
import { apiClient } from './api-client.js';
import { startDataPlane, type DataPlaneOptions, type TestDataPlane } from './data-plane.js';
import { eventually } from './eventually.js';
import { startTestGateway } from './gateway.js';
import type { PoolGatewayView } from './pool-scenarios.js';
import { PoolClient, targetFigures, type TargetFigures } from './pool-traffic.js';
import { service } from './samples.js';
import { signIn } from './sessions.js';
import { startSplitGateway } from './split-gateway.js';
import { startTargetProcess, startTargetProcesses, type TargetBehaviour, type TargetProcess } from './target-process.js';

/** A signed-in admin: session cookie and CSRF token. */
type Admin = { cookie: string; csrfToken: string };

/** A service as the API answers it, with the pool fields. */
export interface PoolServiceAnswer {
  id: string;
  path: string;
  targetUrl: string;
  targets: Array<{ url: string; weight: number }>;
  loadBalancing: string;
  healthCheck: unknown;
  outlierDetection: unknown;
  retries: number;
  [field: string]: unknown;
}

/**
 * Creates a public service at `path` over `pool` (weight 1 each, unless `fields` says otherwise)
 * through `apiUrl`'s `POST /api/services` as `admin`; resolves with the API's answer once every
 * one of `publicUrls` routes the prefix to a target.
 */
export async function createPoolService(apiUrl: string, admin: Admin, publicUrls: readonly string[], path: string, pool: readonly TargetProcess[], fields: Record<string, unknown>): Promise<PoolServiceAnswer> {
  const body = { name: `Pool ${path}`, path, requireAuth: false, targets: pool.map((target) => ({ url: target.url, weight: 1 })), ...fields };
  const created = await apiClient(apiUrl)('POST', '/api/services', { as: admin, json: body });
  assert.equal(created.status, 201, created.text);
  const answer = created.json as PoolServiceAnswer;
  assert.equal(answer.targets.length, pool.length, created.text);
  assert.equal(answer.targetUrl, answer.targets[0]!.url, 'targetUrl reads as the first target');
  for (const [key, value] of Object.entries(fields)) assert.deepEqual(answer[key], value, `${key} as created`);
  for (const publicUrl of publicUrls) {
    await eventually(`${publicUrl}${path} to be routed`, async () => {
      const response = await request(`${publicUrl}${path}/ready`);
      const text = await response.body.text();
      return response.statusCode === 200 && text.startsWith('{"target"');
    }, 15_000);
  }
  return answer;
}

export interface ApiPoolViewOptions {
  /** Public listeners, one client each. */
  publicUrls: readonly string[];
  /** Each proxy process's `/metrics`. */
  metricsUrls: readonly string[];
  /** Where `GET /api/services/:id/health` is asked, as `admin`. */
  apiUrl: string;
  admin: Admin;
  service: PoolServiceAnswer;
  /** The processes behind `service.targets`, in the same order. */
  pool: readonly TargetProcess[];
  /** Connections of each client (default 12). */
  connections?: number;
}

/** The gateway as the scenarios see it; `close()` closes its clients. */
export function apiPoolView(options: ApiPoolViewOptions): PoolGatewayView & { close(): Promise<void> } {
  const { service, pool } = options;
  /** The target's url as the registry holds it (the metrics label and the health API's `url`). */
  const urlOf = (target: TargetProcess): string => service.targets[pool.indexOf(target)]!.url;
  const clients = options.publicUrls.map((url) => new PoolClient(url, options.connections ?? 12));
  const call = apiClient(options.apiUrl);
  return {
    clients,
    prefix: service.path,
    async figures(target) {
      return Promise.all(
        options.metricsUrls.map(async (url) => {
          const response = await request(url);
          return targetFigures(await response.body.text(), service.id, urlOf(target));
        }),
      );
    },
    async reportedStates(target) {
      const health = await call('GET', `/api/services/${service.id}/health`, { as: options.admin });
      assert.equal(health.status, 200, health.text);
      const entry = (health.json.targets as Array<{ url: string; proxies: Array<{ state: string }> }>).find((item) => item.url === urlOf(target));
      return entry?.proxies.map((proxy) => proxy.state) ?? [];
    },
    close: async () => {
      await Promise.all(clients.map((client) => client.close()));
    },
  };
}

/** A running gateway as the pool tests reach it through its admin API, an admin signed in. */
export interface PoolApiGateway {
  /** Where `POST /api/services` and `GET /api/services/:id/health` are asked, as {@link admin}. */
  apiUrl: string;
  admin: Admin;
  /** Its public listeners. */
  publicUrls: string[];
  /** Each proxy process's `/metrics`. */
  metricsUrls: string[];
  close(): Promise<void>;
}

/** The embedded gateway (`startTestGateway(env)`): its API and public listener on the public port, its metrics on the admin port. */
export async function startEmbeddedPoolGateway(env: Record<string, string> = {}): Promise<PoolApiGateway> {
  const gw = await startTestGateway(env);
  return { apiUrl: gw.origin, admin: await signIn(gw), publicUrls: [gw.origin], metricsUrls: [`${gw.adminUrl}/metrics`], close: () => gw.close() };
}

/** The split processes (`startSplitGateway(env)`): the admin process's API, both proxy processes' listeners and metrics. */
export async function startSplitPoolGateway(env: Record<string, string> = {}): Promise<PoolApiGateway> {
  const split = await startSplitGateway(env);
  return {
    apiUrl: split.adminUrl,
    admin: await split.signIn(),
    publicUrls: split.proxies.map((proxy) => proxy.url),
    metricsUrls: split.proxies.map((proxy) => `${proxy.internalUrl}/metrics`),
    close: () => split.close(),
  };
}

/** A test file's pool services through a gateway's admin API: see {@link apiPools}. */
export interface ApiPools {
  /** Starts target process `id` (closed after the file). */
  target(id: string, behaviour?: Partial<TargetBehaviour>): Promise<TargetProcess>;
  /** Creates a service at `path` over `pool` with `fields` ({@link createPoolService}); the gateway as the scenarios see it. */
  service(path: string, pool: TargetProcess[], fields: Record<string, unknown>): Promise<PoolGatewayView>;
  /** Starts target processes `ids` answering as `behaviour` says, and makes them a service as {@link service} does. */
  pool(path: string, ids: string[], behaviour: Partial<TargetBehaviour>, fields: Record<string, unknown>): Promise<{ pool: TargetProcess[]; view: PoolGatewayView }>;
}

/**
 * Starts the gateway `start` gives before this file's tests; after them closes the views' clients
 * (`connections` each, default 12), then every target process, then the gateway.
 */
export function apiPools(start: () => Promise<PoolApiGateway>, options: { connections?: number } = {}): ApiPools {
  let gateway: PoolApiGateway | undefined;
  const targets: TargetProcess[] = [];
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    gateway = await start();
  });
  after(async () => {
    for (const close of closers) await close();
    await Promise.all(targets.map((target) => target.close()));
    await gateway?.close();
  });
  const pools: ApiPools = {
    async target(id, behaviour = {}) {
      const started = await startTargetProcess(id, behaviour);
      targets.push(started);
      return started;
    },
    async service(path, pool, fields) {
      const { apiUrl, admin, publicUrls, metricsUrls } = gateway!;
      const service = await createPoolService(apiUrl, admin, publicUrls, path, pool, fields);
      const view = apiPoolView({ publicUrls, metricsUrls, apiUrl, admin, service, pool, ...options });
      closers.push(view.close);
      return view;
    },
    async pool(path, ids, behaviour, fields) {
      const pool = await startTargetProcesses(ids, behaviour);
      targets.push(...pool);
      return { pool, view: await pools.service(path, pool, fields) };
    },
  };
  return pools;
}

/** A test file's pool services on a data plane alone: see {@link dataPlanePools}. */
export interface DataPlanePools {
  /** The data plane (once the file's `before` has run). */
  readonly plane: TestDataPlane;
  /** Starts target process `id` (closed after the file). */
  target(id: string, behaviour?: Partial<TargetBehaviour>): Promise<TargetProcess>;
  /** Starts target processes `ids` (closed after the file). */
  targets(ids: string[], behaviour?: Partial<TargetBehaviour>): Promise<TargetProcess[]>;
  /** A keep-alive client of the data plane with at most `connections` connections (closed after the file). */
  client(connections: number): PoolClient;
  /**
   * Publishes, with every service published before it, a service at `path` over `pool` (`targetUrl`
   * the first one's, `targets` each with weight 1) with `fields` on top; resolves with it.
   */
  publish(path: string, pool: readonly TargetProcess[], fields: Partial<Service>): Promise<Service>;
  /** `target`'s figures in the data plane's metrics as a target of `svc`. */
  figures(svc: Service, target: TargetProcess): Promise<TargetFigures>;
  /** The data plane as the scenarios see it: one proxy, `http` its client, `svc`'s prefix, its metrics, no admin API. */
  view(svc: Service, http: PoolClient): PoolGatewayView;
}

/**
 * Starts a data plane (`startDataPlane(options)`) before this file's tests; after them closes the
 * clients, then every target process, then the data plane.
 */
export function dataPlanePools(options: DataPlaneOptions = {}): DataPlanePools {
  let plane: TestDataPlane | undefined;
  const targets: TargetProcess[] = [];
  const clients: PoolClient[] = [];
  const published: Service[] = [];
  before(async () => {
    plane = await startDataPlane(options);
  });
  after(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await Promise.all(targets.map((target) => target.close()));
    await plane?.close();
  });
  const pools: DataPlanePools = {
    get plane() {
      return plane!;
    },
    async target(id, behaviour = {}) {
      const started = await startTargetProcess(id, behaviour);
      targets.push(started);
      return started;
    },
    async targets(ids, behaviour = {}) {
      const started = await startTargetProcesses(ids, behaviour);
      targets.push(...started);
      return started;
    },
    client(connections) {
      const made = new PoolClient(pools.plane.origin, connections);
      clients.push(made);
      return made;
    },
    async publish(path, pool, fields) {
      const made = service({ path, targetUrl: pool[0]!.url, targets: pool.map((target) => ({ url: target.url, weight: 1 })), ...fields });
      published.push(made);
      await pools.plane.publish(published);
      return made;
    },
    async figures(svc, target) {
      return targetFigures(await pools.plane.metrics.registry.metrics(), svc.id, target.url);
    },
    view(svc, http) {
      return { clients: [http], prefix: svc.path, figures: async (target) => [await pools.figures(svc, target)] };
    },
  };
  return pools;
}
