import { readFileSync } from 'node:fs';

/** A `host:port` of a Sentinel (or, later, a Cluster node). */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * How the gateway reaches Redis (README "Running a fleet"): one node at a URL (REDIS_URL), or the
 * primary of a group that Redis Sentinel monitors (REDIS_SENTINELS, REDIS_SENTINEL_NAME), found
 * through the Sentinels and found again after a failover. `username`/`password` (REDIS_USERNAME,
 * REDIS_PASSWORD: ACL) authenticate to the data nodes in either mode (a URL's own credentials win);
 * `tls` holds the files of REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE, read at
 * start, and is set for a `rediss://` URL or REDIS_TLS=true.
 */
export type RedisTarget = (
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string; sentinelPassword: string | undefined }
) & {
  username: string | undefined;
  password: string | undefined;
  tls: RedisTls | undefined;
};

/** TLS towards Redis: the CA that signs its certificate (else the system's), and a client certificate for mutual TLS. */
export interface RedisTls {
  ca: Buffer | undefined;
  cert: Buffer | undefined;
  key: Buffer | undefined;
}

/** The Redis variables as read (trimmed; undefined when unset). */
export interface RedisVariables {
  REDIS_URL?: string | undefined;
  REDIS_SENTINELS?: string | undefined;
  REDIS_SENTINEL_NAME?: string | undefined;
  REDIS_SENTINEL_PASSWORD?: string | undefined;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS?: string | undefined;
  REDIS_TLS_CA_FILE?: string | undefined;
  REDIS_TLS_CERT_FILE?: string | undefined;
  REDIS_TLS_KEY_FILE?: string | undefined;
}

/**
 * The Redis target the variables describe, or undefined without REDIS_URL and REDIS_SENTINELS
 * (embedded mode). Problems are pushed to `problems` as `<VARIABLE>: <what is wrong>`, naming both
 * variables when two modes are asked for at once; the result is then meaningless.
 */
export function readRedisTarget(vars: RedisVariables, problems: string[]): RedisTarget | undefined {
  const { REDIS_URL: url, REDIS_SENTINELS: sentinels } = vars;
  if (url !== undefined && sentinels !== undefined) {
    problems.push('REDIS_URL, REDIS_SENTINELS: set one of them, not both (a single Redis node, or a group Redis Sentinel monitors)');
    return undefined;
  }
  const common = { username: vars.REDIS_USERNAME, password: vars.REDIS_PASSWORD };
  if (url !== undefined) {
    if (vars.REDIS_TLS === 'true' && !url.startsWith('rediss://')) problems.push('REDIS_TLS: with REDIS_URL, TLS is asked for by a rediss:// URL');
    return { kind: 'single', url, ...common, tls: url.startsWith('rediss://') ? readTls(vars, problems) : undefined };
  }
  if (sentinels === undefined) {
    if (vars.REDIS_SENTINEL_NAME !== undefined) problems.push('REDIS_SENTINEL_NAME: needs REDIS_SENTINELS');
    return undefined;
  }
  const nodes = parseNodes(sentinels);
  if (nodes === undefined) problems.push('REDIS_SENTINELS: must be host:port pairs separated by commas (sentinel-1:26379,sentinel-2:26379)');
  if (vars.REDIS_SENTINEL_NAME === undefined) problems.push('REDIS_SENTINEL_NAME: must name the group the Sentinels monitor (their `sentinel monitor <name> …`)');
  if (vars.REDIS_TLS !== undefined && vars.REDIS_TLS !== 'true' && vars.REDIS_TLS !== 'false') problems.push('REDIS_TLS: must be true or false');
  return {
    kind: 'sentinel',
    sentinels: nodes ?? [],
    name: vars.REDIS_SENTINEL_NAME ?? '',
    sentinelPassword: vars.REDIS_SENTINEL_PASSWORD,
    ...common,
    tls: vars.REDIS_TLS === 'true' ? readTls(vars, problems) : undefined,
  };
}

/** `host:port,host:port` (IPv6 in brackets: `[::1]:26379`), or undefined when malformed. */
function parseNodes(text: string): RedisNode[] | undefined {
  const nodes: RedisNode[] = [];
  for (const item of text.split(',').map((part) => part.trim())) {
    const match = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) return undefined;
    nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return nodes;
}

/** The TLS files, read now, so an unreadable one stops the start naming its variable. */
function readTls(vars: RedisVariables, problems: string[]): RedisTls {
  const read = (name: 'REDIS_TLS_CA_FILE' | 'REDIS_TLS_CERT_FILE' | 'REDIS_TLS_KEY_FILE') => {
    const path = vars[name];
    if (path === undefined) return undefined;
    try {
      return readFileSync(path);
    } catch (error) {
      problems.push(`${name}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return undefined;
    }
  };
  const tls = { ca: read('REDIS_TLS_CA_FILE'), cert: read('REDIS_TLS_CERT_FILE'), key: read('REDIS_TLS_KEY_FILE') };
  if ((vars.REDIS_TLS_CERT_FILE === undefined) !== (vars.REDIS_TLS_KEY_FILE === undefined)) {
    problems.push('REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE: mutual TLS needs both, the certificate and its key');
  }
  return tls;
}
