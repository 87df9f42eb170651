import { readFileSync } from 'node:fs';
import { errorCode } from '../error-code.js';

/** A `host:port` of a Sentinel or a Cluster node. */
export interface RedisNode {
  host: string;
  port: number;
}

/**
 * How the gateway reaches Redis (README "Running a fleet"): one node at a URL (REDIS_URL), the
 * primary of a group that Redis Sentinel monitors (REDIS_SENTINELS, REDIS_SENTINEL_NAME), found
 * through the Sentinels and found again after a failover, or a Redis Cluster through some of its
 * nodes (REDIS_CLUSTER_NODES; the rest are learnt from CLUSTER SLOTS). `username`/`password`
 * (REDIS_USERNAME, REDIS_PASSWORD: ACL) authenticate to the data nodes in every mode (a URL's own
 * credentials win); `tls` holds the files of REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE and
 * REDIS_TLS_KEY_FILE, read at start, and is set for a `rediss://` URL or REDIS_TLS=true.
 */
export type RedisTarget = (
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string; sentinelPassword: string | undefined }
  | { kind: 'cluster'; nodes: RedisNode[] }
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
  REDIS_CLUSTER_NODES?: string | undefined;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS?: string | undefined;
  REDIS_TLS_CA_FILE?: string | undefined;
  REDIS_TLS_CERT_FILE?: string | undefined;
  REDIS_TLS_KEY_FILE?: string | undefined;
}

/** The variables that each choose a mode; at most one may be set. */
const MODES = [
  ['REDIS_URL', 'a single Redis node'],
  ['REDIS_SENTINELS', 'a group Redis Sentinel monitors'],
  ['REDIS_CLUSTER_NODES', 'a Redis Cluster'],
] as const;

/**
 * The Redis target the variables describe, or undefined without REDIS_URL, REDIS_SENTINELS and
 * REDIS_CLUSTER_NODES (embedded mode). Problems are pushed to `problems` as `<VARIABLE>: <what is
 * wrong>`, naming every variable set when two modes are asked for at once; the result is then
 * meaningless.
 */
export function readRedisTarget(vars: RedisVariables, problems: string[]): RedisTarget | undefined {
  const modes = MODES.filter(([name]) => vars[name] !== undefined);
  if (modes.length > 1) {
    problems.push(`${modes.map(([name]) => name).join(', ')}: set one of them, not ${modes.length === 2 ? 'both' : 'several'} (${modes.map(([, what]) => what).join(', or ')})`);
    return undefined;
  }
  if (vars.REDIS_SENTINEL_NAME !== undefined && vars.REDIS_SENTINELS === undefined) problems.push('REDIS_SENTINEL_NAME: needs REDIS_SENTINELS');
  const common = { username: vars.REDIS_USERNAME, password: vars.REDIS_PASSWORD };
  const url = vars.REDIS_URL;
  if (url !== undefined) {
    if (vars.REDIS_TLS === 'true' && !url.startsWith('rediss://')) problems.push('REDIS_TLS: with REDIS_URL, TLS is asked for by a rediss:// URL');
    return { kind: 'single', url, ...common, tls: url.startsWith('rediss://') ? readTls(vars, problems) : undefined };
  }
  if (modes.length === 0) return undefined;
  const tls = vars.REDIS_TLS === 'true' ? readTls(vars, problems) : undefined;
  if (vars.REDIS_CLUSTER_NODES !== undefined) {
    const nodes = parseNodes(vars.REDIS_CLUSTER_NODES);
    if (nodes === undefined) problems.push('REDIS_CLUSTER_NODES: must be host:port pairs separated by commas (redis-1:6379,redis-2:6379)');
    return { kind: 'cluster', nodes: nodes ?? [], ...common, tls };
  }
  const nodes = parseNodes(vars.REDIS_SENTINELS!);
  if (nodes === undefined) problems.push('REDIS_SENTINELS: must be host:port pairs separated by commas (sentinel-1:26379,sentinel-2:26379)');
  if (vars.REDIS_SENTINEL_NAME === undefined) problems.push('REDIS_SENTINEL_NAME: must name the group the Sentinels monitor (their `sentinel monitor <name> …`)');
  return {
    kind: 'sentinel',
    sentinels: nodes ?? [],
    name: vars.REDIS_SENTINEL_NAME ?? '',
    sentinelPassword: vars.REDIS_SENTINEL_PASSWORD,
    ...common,
    tls,
  };
}

/** The variable that chose `target`'s mode, for messages that must not quote its value (a URL may hold a password). */
export function redisTargetVariable(target: RedisTarget): string {
  return { single: 'REDIS_URL', sentinel: 'REDIS_SENTINELS', cluster: 'REDIS_CLUSTER_NODES' }[target.kind];
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
      problems.push(`${name}: cannot read ${path} (${errorCode(error) ?? 'error'})`);
      return undefined;
    }
  };
  const tls = { ca: read('REDIS_TLS_CA_FILE'), cert: read('REDIS_TLS_CERT_FILE'), key: read('REDIS_TLS_KEY_FILE') };
  if ((vars.REDIS_TLS_CERT_FILE === undefined) !== (vars.REDIS_TLS_KEY_FILE === undefined)) {
    problems.push('REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE: mutual TLS needs both, the certificate and its key');
  }
  return tls;
}

/** A single node's target from its URL alone (tests, tools): no extra credentials, TLS as the scheme says. */
export function urlTarget(url: string): RedisTarget {
  return { kind: 'single', url, username: undefined, password: undefined, tls: undefined };
}
