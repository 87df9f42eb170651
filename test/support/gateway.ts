import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../shared/config/config.js';
import { startGateway, type Gateway } from '../../admin/process/embedded-gateway.js';
import { createLogger } from '../../shared/logger.js';
import { freePort } from './free-port.js';
import { TEST_ENV } from './test-env.js';

/** A gateway started for one test file, with its own temporary SQLite file. */
export interface TestGateway {
  /** Public listener, e.g. http://127.0.0.1:PORT (equal to PUBLIC_URL's origin). */
  origin: string;
  /** The admin-port API. */
  adminUrl: string;
  gateway: Gateway;
  databasePath: string;
  /** Stops the gateway and removes its temporary folder. */
  close(): Promise<void>;
}

/**
 * Starts the embedded gateway on free ports with a temp database. Rate limits are off unless
 * `env` sets them; OIDC points at an unreachable placeholder unless `env` sets it (discovery is
 * lazy, so only logins need a real provider). Pass `PORT` to fix the public port (for example when
 * an identity provider must know the redirect URI first), and `onLog` to read the gateway's log
 * lines (JSON, at `LOG_LEVEL`, which is `silent` unless `env` sets it).
 */
export async function startTestGateway(env: Record<string, string> = {}, options: { onLog?: (line: string) => void } = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-test-'));
  const port = env.PORT ?? String(await freePort());
  const config = loadConfig({
    PORT: port,
    ADMIN_PORT: '0',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_PATH: join(dir, 'gateway.db'),
    OIDC_ISSUER: 'http://127.0.0.1:9/unreachable',
    OIDC_CLIENT_ID: 'gatehouse-test',
    ...TEST_ENV,
    ...env,
  });
  const destination = options.onLog && { write: options.onLog };
  const gateway = await startGateway(config, createLogger(config.logLevel, 'gatehouse-test', destination));
  return {
    origin: `http://127.0.0.1:${gateway.port}`,
    adminUrl: `http://127.0.0.1:${gateway.adminPort}`,
    gateway,
    databasePath: config.databasePath,
    async close() {
      await gateway.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
