import { ConfigError, loadConfig, type Config } from './config.js';
import { startGateway } from './gateway.js';
import { createLogger } from './logger.js';

/**
 * `npm start`: the embedded gateway. Exits 1 with one line per bad variable on a configuration
 * error, and with instructions when no OpenID Provider is configured. On SIGTERM or SIGINT it
 * drains, flushes buffered access-log records, and exits 0.
 */
async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config.logLevel, 'gatehouse');
  const gateway = await startGateway(config, logger);
  logger.info({ port: gateway.port, adminPort: gateway.adminPort, publicUrl: config.publicUrl.href }, 'gatehouse listening');
  const stop = (signal: string) => {
    logger.info({ signal }, 'stopping');
    gateway.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

function readConfig(): Config {
  try {
    const config = loadConfig();
    if (!config.oidc.issuer || !config.oidc.clientId) fail(NO_ISSUER);
    return config;
  } catch (error) {
    if (error instanceof ConfigError) fail(error.problems.map((line) => `gatehouse: ${line}`).join('\n'));
    throw error;
  }
}

const NO_ISSUER = `gatehouse: OIDC_ISSUER and OIDC_CLIENT_ID are not set, so nobody could sign in.
  Configure your OpenID Provider, for example:
    OIDC_ISSUER=https://idp.example.com OIDC_CLIENT_ID=gatehouse OIDC_CLIENT_SECRET=... \\
    ADMIN_EMAILS=you@example.com npm start
  (register ${'<PUBLIC_URL>'}/auth/callback as the client's redirect URI)
  Or try Gatehouse with a bundled demo identity provider and upstream: npm run demo`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

void main().catch((error: unknown) => {
  process.stderr.write(`gatehouse: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
