import { startGateway } from './embedded-gateway.js';
import { stopOnSignals } from '../../shared/graceful-stop.js';
import { createLogger } from '../../shared/logger.js';
import { readProcessConfig } from '../../shared/config/process-config.js';

/**
 * `npm start`: the embedded gateway. Exits 1 with one line per bad variable on a configuration
 * error, and with instructions when no OpenID Provider is configured. On SIGTERM or SIGINT it
 * drains, flushes buffered access-log records, and exits 0, within 18 s whatever Redis does (README
 * "Stopping").
 */
async function main(): Promise<void> {
  const config = readProcessConfig('', { requireRedis: false, requireOidc: true });
  const logger = createLogger(config.logLevel, 'gatehouse');
  const gateway = await startGateway(config, logger);
  logger.info({ port: gateway.port, adminPort: gateway.adminPort, publicUrl: config.publicUrl.href }, 'gatehouse listening');
  stopOnSignals({ logger, stop: () => gateway.close() });
}

void main().catch((error: unknown) => {
  process.stderr.write(`gatehouse: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
