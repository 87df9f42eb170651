import { ConfigError, loadConfig, type Config } from './config.js';

/**
 * The configuration of a process about to start, or an exit with status 1 and one line per
 * problem (design.md §6). `requireRedis`: split-mode processes share state only through Redis.
 * `requireOidc`: a process that signs users in needs an OpenID Provider.
 */
export function readProcessConfig(role: string, needs: { requireRedis: boolean; requireOidc: boolean }): Config {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) exitWith(error.problems.map((line) => `${label(role)}: ${line}`).join('\n'));
    throw error;
  }
  if (needs.requireRedis && !config.redis) {
    exitWith(`${label(role)}: REDIS_URL is not set, nor REDIS_SENTINELS or REDIS_CLUSTER_NODES. The ${role} process shares sessions, the registry, rate limits and access logs with the other processes through Redis; set REDIS_URL=redis://host:6379, REDIS_SENTINELS and REDIS_SENTINEL_NAME, or REDIS_CLUSTER_NODES (or run both planes in one process with npm start).`);
  }
  if (needs.requireOidc && (!config.oidc.issuer || !config.oidc.clientId)) exitWith(noIssuerMessage(role));
  return config;
}

function noIssuerMessage(role: string): string {
  return `${label(role)}: OIDC_ISSUER and OIDC_CLIENT_ID are not set, so nobody could sign in.
  Configure your OpenID Provider, for example:
    OIDC_ISSUER=https://idp.example.com OIDC_CLIENT_ID=gatehouse OIDC_CLIENT_SECRET=... \\
    ADMIN_EMAILS=you@example.com npm start
  (register <PUBLIC_URL>/auth/callback as the client's redirect URI)
  Or try Gatehouse with a bundled demo identity provider and upstream: npm run demo`;
}

/** `gatehouse` for `npm start`, `gatehouse proxy` / `gatehouse admin` for split-mode processes. */
function label(role: string): string {
  return role ? `gatehouse ${role}` : 'gatehouse';
}

function exitWith(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
