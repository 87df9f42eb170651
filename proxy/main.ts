import cluster from 'node:cluster';
import { readProcessConfig } from '../shared/process-config.js';
import { runProxyPrimary } from './proxy-primary.js';
import { runProxyWorker } from './proxy-worker.js';

/**
 * `npm run start:proxy`: the data plane alone (split mode, DESIGN §2). Needs REDIS_URL. The
 * primary process forks PROXY_WORKERS workers that share PORT (node:cluster) and serves
 * `/healthz`, `/readyz` and `/metrics` on INTERNAL_PORT; each worker routes, checks and forwards.
 */
const config = readProcessConfig('proxy', { requireRedis: true, requireOidc: false });
if (cluster.isPrimary) runProxyPrimary(config);
else runProxyWorker(config);
