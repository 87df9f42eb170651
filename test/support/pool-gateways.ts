/**
 * A pool service made through the admin API of a running gateway (embedded or split), and the
 * gateway as pool-scenarios.ts sees it: its public listeners, each proxy process's `/metrics` and
 * `GET /api/services/:id/health`.
 */
import assert from 'node:assert/strict';
import { request } from 'undici';
import { apiClient } from './api-client.js';
import { eventually } from './eventually.js';
import type { PoolGatewayView } from './pool-scenarios.js';
import { PoolClient, targetFigures } from './pool-traffic.js';
import type { TargetProcess } from './target-process.js';

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
