/**
 * A test data plane (data-plane.ts) whose gateway-owned paths go through the real split-mode hand-off
 * (proxy/forward/admin-handoff.ts), built from the same settings as the gateway, to a real HTTP server
 * that stands in for the admin process.
 */
import { createAdminHandoff } from '../../proxy/forward/admin-handoff.js';
import { clientIpResolver } from '../../shared/http/client-ip.js';
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/logger.js';
import type { Service } from '../../shared/types.js';
import type { Upstream } from './upstream.js';
import { startDataPlane, type TestDataPlane } from './data-plane.js';

/**
 * Starts a gateway with `env` (ADMIN_INTERNAL_URL set to `admin`'s origin) and `services`, handing
 * off to `admin`. Its `close` closes the hand-off too; `admin` is the caller's to close.
 */
export async function startHandedOffGateway(admin: Upstream, env: Record<string, string>, services: Service[]): Promise<TestDataPlane> {
  const settings = { ...env, ADMIN_INTERNAL_URL: admin.origin };
  const config = loadConfig(settings);
  const handoff = createAdminHandoff(config, clientIpResolver(config.trustProxy), createLogger('silent', 'test'));
  const gateway = await startDataPlane({ env: settings, services, adminPlane: handoff.handle });
  return {
    ...gateway,
    async close() {
      await gateway.close();
      await handoff.close();
    },
  };
}
