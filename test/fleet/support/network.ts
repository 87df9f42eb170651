/**
 * A small data centre on this machine (README "Running a fleet"): one Linux bridge in the root network
 * namespace with an address in the benchmarking range 198.18.0.0/15 (the test process, its
 * OpenID Provider and its upstream live there), and one network namespace per host, joined to the
 * bridge by a veth pair, with its own address and `lo` up. Processes run on a host through
 * `ip netns exec <namespace> …` ({@link FleetHost.prefix}).
 *
 * Names carry the run's pid (`ghf_<pid base 36>_…`, interface names within 15 characters), so the
 * namespaces and links of a run whose process is gone (a crashed run) are removed at the next
 * start, and concurrent runs leave each other alone (each picks a /24 no interface has yet).
 * Everything is removed by {@link DataCentre.close}, and again when the test process exits.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { processGone } from '../../support/gatehouse-process.js';

/** Prefix of every namespace and link this module makes. */
const PREFIX = 'ghf_';
/** The run id in names: this process's pid in base 36 (at most 5 characters for a 22-bit pid). */
const RUN = process.pid.toString(36);
/** Where iproute2's `ip` usually is; the first one present wins, else `ip` on PATH. */
const IP_CANDIDATES = ['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip'];

/** One host of the data centre: a network namespace with one address on the bridge. */
export interface FleetHost {
  /** Its role name (`redis1`, `admin`, `proxy1`, `client`…). */
  name: string;
  /** Its network namespace. */
  namespace: string;
  /** Its IPv4 address on the bridge. */
  address: string;
  /** The command prefix that runs a program on it (the program must follow; `ip netns exec` execs it). */
  prefix: readonly string[];
  /** Its veth end on the bridge, in the root namespace (down: the host is cut off). */
  link: string;
}

/** The bridge, the hosts, and the faults a scenario can inject. */
export interface DataCentre {
  /** The bridge's address: where the test process, its OpenID Provider and upstream listen. */
  gateway: string;
  hosts: readonly FleetHost[];
  /** The host named `name`. @throws for an unknown name. */
  host(name: string): FleetHost;
  /** Cuts `host` off entirely: its link on the bridge goes down (no packet in or out, no reset). */
  cutLink(host: FleetHost): void;
  /** Brings `host`'s link up again. */
  restoreLink(host: FleetHost): void;
  /**
   * Cuts `host` off from `others` only, both ways (a blackhole route to each on either side), as a
   * partition between racks would; the other hosts still reach it and it them.
   */
  isolate(host: FleetHost, others: readonly FleetHost[]): void;
  /** Removes the routes {@link isolate} added between `host` and `others`. */
  rejoin(host: FleetHost, others: readonly FleetHost[]): void;
  /** Stops whatever still runs on the hosts and removes the namespaces, links and bridge. */
  close(): void;
}

/** Path of `ip`, or undefined when iproute2 is not installed. */
function ipCommand(): string | undefined {
  const found = IP_CANDIDATES.find((path) => existsSync(path));
  if (found !== undefined) return found;
  return spawnSync('ip', ['-V']).status === 0 ? 'ip' : undefined;
}

/** Runs `ip …`; returns its stdout. @throws with its stderr when it fails (unless `tolerate`). */
function ip(args: readonly string[], tolerate = false): string {
  const run = spawnSync(ipCommand() ?? 'ip', args, { encoding: 'utf8' });
  if (run.status !== 0 && !tolerate) throw new Error(`ip ${args.join(' ')} failed: ${run.stderr || run.error}`);
  return run.stdout ?? '';
}

/**
 * Why this machine cannot build the data centre (not root, no `ip`, no redis-server, network
 * namespaces refused), or undefined when it can: for node:test's `skip`.
 */
export function fleetUnsupported(): string | undefined {
  if (process.platform !== 'linux') return 'the fleet suite needs Linux network namespaces';
  if (process.getuid?.() !== 0) return 'the fleet suite needs root (it makes network namespaces and a bridge)';
  if (ipCommand() === undefined) return 'the fleet suite needs `ip` (iproute2)';
  for (const tool of ['redis-server', 'redis-cli', 'openssl']) {
    if (spawnSync(tool, ['--version']).error !== undefined) return `the fleet suite needs ${tool}`;
  }
  const probe = `${PREFIX}${RUN}_probe`;
  const made = spawnSync(ipCommand()!, ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `network namespaces are refused here: ${made.stderr.trim()}`;
  ip(['netns', 'del', probe], true);
  return undefined;
}

/** The run id in a name of ours, or undefined for a name that is not ours. */
function runOf(name: string): string | undefined {
  return name.startsWith(PREFIX) ? name.slice(PREFIX.length).split('_')[0] : undefined;
}

/** Whether `name` belongs to a run whose process is gone. */
function isStale(name: string): boolean {
  const run = runOf(name);
  return run !== undefined && run !== RUN && processGone(parseInt(run, 36));
}

/** Kills every process in `namespace` and removes it. */
function removeNamespace(namespace: string): void {
  for (const pid of ip(['netns', 'pids', namespace], true).split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  ip(['netns', 'del', namespace], true);
}

/** Names of the links of the root namespace (without their `@peer`). */
function linkNames(): string[] {
  return ip(['-o', 'link', 'show']).split('\n').map((line) => line.split(': ')[1]?.split('@')[0] ?? '').filter(Boolean);
}

/** Removes the namespaces and links of runs whose process is gone. */
function removeStale(): void {
  for (const namespace of ip(['netns', 'list']).split('\n').map((line) => line.split(' ')[0] ?? '')) {
    if (isStale(namespace)) removeNamespace(namespace);
  }
  for (const link of linkNames()) if (isStale(link)) ip(['link', 'del', link], true);
}

/** The first /24 of 198.18.0.0/15, from one the pid picks, that no interface of this machine is on. */
function freeSubnet(): string {
  const taken = ip(['-4', '-o', 'addr', 'show']);
  for (let n = 0; n < 512; n++) {
    const index = (process.pid + n) % 512;
    const subnet = `198.${18 + (index >> 8)}.${index & 255}`;
    if (!taken.includes(` ${subnet}.`)) return subnet;
  }
  throw new Error('no free /24 in 198.18.0.0/15');
}

/** Runs `ip …` inside `namespace`. */
function ipIn(namespace: string, args: readonly string[], tolerate = false): string {
  return ip(['-n', namespace, ...args], tolerate);
}

/** Makes host number `index` (address .10 + index) on `bridge`. */
function addHost(name: string, index: number, subnet: string, bridge: string): FleetHost {
  const namespace = `${PREFIX}${RUN}_${name}`;
  const link = `${PREFIX}${RUN}_v${index}`;
  const peer = `${PREFIX}${RUN}_p${index}`;
  const address = `${subnet}.${10 + index}`;
  ip(['netns', 'add', namespace]);
  ip(['link', 'add', link, 'type', 'veth', 'peer', 'name', peer]);
  ip(['link', 'set', peer, 'netns', namespace]);
  ip(['link', 'set', link, 'master', bridge, 'up']);
  ipIn(namespace, ['link', 'set', peer, 'name', 'eth0']);
  ipIn(namespace, ['addr', 'add', `${address}/24`, 'dev', 'eth0']);
  ipIn(namespace, ['link', 'set', 'eth0', 'up']);
  ipIn(namespace, ['link', 'set', 'lo', 'up']);
  return { name, namespace, address, link, prefix: [ipCommand()!, 'netns', 'exec', namespace] };
}

/**
 * Builds the bridge and one host per name (addresses .10, .11, … of a free /24), after removing
 * what crashed runs left. Check {@link fleetUnsupported} first.
 */
export function buildDataCentre(hostNames: readonly string[]): DataCentre {
  removeStale();
  const subnet = freeSubnet();
  const bridge = `${PREFIX}${RUN}_b`;
  const hosts: FleetHost[] = [];
  const close = () => {
    for (const host of hosts) removeNamespace(host.namespace);
    for (const link of linkNames()) if (runOf(link) === RUN) ip(['link', 'del', link], true);
    hosts.length = 0;
  };
  process.once('exit', close);
  try {
    ip(['link', 'add', bridge, 'type', 'bridge']);
    ip(['addr', 'add', `${subnet}.1/24`, 'dev', bridge]);
    ip(['link', 'set', bridge, 'up']);
    hostNames.forEach((name, index) => hosts.push(addHost(name, index, subnet, bridge)));
  } catch (error) {
    close();
    throw error;
  }
  const routes = (host: FleetHost, others: readonly FleetHost[], action: 'add' | 'del') => {
    for (const other of others) {
      ipIn(host.namespace, ['route', action, 'blackhole', `${other.address}/32`], action === 'del');
      ipIn(other.namespace, ['route', action, 'blackhole', `${host.address}/32`], action === 'del');
    }
  };
  return {
    gateway: `${subnet}.1`,
    hosts,
    host(name) {
      const host = hosts.find((candidate) => candidate.name === name);
      if (host === undefined) throw new Error(`no host ${name} in the data centre`);
      return host;
    },
    cutLink: (host) => void ip(['link', 'set', host.link, 'down']),
    restoreLink: (host) => void ip(['link', 'set', host.link, 'up']),
    isolate: (host, others) => routes(host, others, 'add'),
    rejoin: (host, others) => routes(host, others, 'del'),
    close() {
      close();
      process.off('exit', close);
    },
  };
}
