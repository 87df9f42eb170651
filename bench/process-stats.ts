/**
 * Memory and CPU of processes, read from Linux's /proc:
 * - resident and proportional set size of a process and all its descendants, e.g. a cluster
 *   primary and its workers;
 * - CPU time of the whole machine versus this benchmark's own process tree, to tell how much CPU
 *   other programs took during a run (the benchmark shares its cores with whatever else runs).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/stat and /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** `pid`, and the pids of all its descendants, alive now. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    const siblings = children.get(stat.ppid) ?? [];
    siblings.push(Number(entry));
    children.set(stat.ppid, siblings);
  }
  const tree: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return tree;
}

/** Memory of a set of processes, in bytes. */
export interface TreeMemory {
  /**
   * Summed resident set sizes (`Rss`): every page each process has in RAM, so pages the
   * processes share (Node's code, a cluster's forked-from pages) count once per process.
   */
  rssBytes: number;
  /** Summed proportional set sizes (`Pss`): a page shared by n processes counts 1/n in each. */
  pssBytes: number;
  /** The largest single process's `Rss` (with node:cluster: a worker, or the primary). */
  largestRssBytes: number;
}

/** Memory of `pid` and its descendants (/proc/<pid>/smaps_rollup). */
export function treeMemory(pid: number): TreeMemory {
  let rssBytes = 0;
  let pssBytes = 0;
  let largestRssBytes = 0;
  for (const member of processTree(pid)) {
    const memory = processMemory(member);
    if (!memory) continue;
    rssBytes += memory.rssBytes;
    pssBytes += memory.pssBytes;
    largestRssBytes = Math.max(largestRssBytes, memory.rssBytes);
  }
  return { rssBytes, pssBytes, largestRssBytes };
}

function processMemory(pid: number): { rssBytes: number; pssBytes: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? 0);
    return { rssBytes: kb('Rss') * 1024, pssBytes: kb('Pss') * 1024 };
  } catch {
    return undefined; // exited meanwhile
  }
}

/**
 * Samples the memory of `pid`'s tree every `intervalMs` until stopped; `stop()` returns the peak
 * of each sum.
 */
export function sampleTreeMemory(pid: number, intervalMs = 200): { stop(): { peak: TreeMemory } } {
  const peak: TreeMemory = { rssBytes: 0, pssBytes: 0, largestRssBytes: 0 };
  const sample = () => {
    const now = treeMemory(pid);
    peak.rssBytes = Math.max(peak.rssBytes, now.rssBytes);
    peak.pssBytes = Math.max(peak.pssBytes, now.pssBytes);
    peak.largestRssBytes = Math.max(peak.largestRssBytes, now.largestRssBytes);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return { peak };
    },
  };
}

/** A reading of the machine's busy CPU time and of this benchmark's processes, in ticks. */
export interface CpuReading {
  machineBusyTicks: number;
  /** This process's tree, by role (see {@link processRole}). */
  ownTicksByRole: Map<string, number>;
  /** `performance.now()` at the reading, in ms. */
  at: number;
}

/** CPU used between two readings, in cores (1.0 = one core busy the whole time). */
export interface CpuUse {
  /** By this benchmark's process tree (load generator and servers). */
  ownCores: number;
  /** By everything else on the machine. */
  otherCores: number;
  /** `ownCores` by role. */
  byRole: Record<string, number>;
  /** Length of the interval, in s. */
  seconds: number;
}

/** Reads busy time of all CPUs (/proc/stat) and of this process's tree (user + system). */
export function readCpu(): CpuReading {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  // cpu user nice system idle iowait irq softirq steal guest guest_nice
  const fields = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const busy = fields.slice(0, 8).reduce((sum, value) => sum + value, 0) - idle;
  const ownTicksByRole = new Map<string, number>();
  for (const pid of processTree(process.pid)) {
    const ticks = readStat(pid)?.cpuTicks;
    if (ticks === undefined) continue;
    const role = processRole(pid);
    ownTicksByRole.set(role, (ownTicksByRole.get(role) ?? 0) + ticks);
  }
  return { machineBusyTicks: busy, ownTicksByRole, at: performance.now() };
}

/**
 * CPU used between two readings. Processes of the tree that exited in between are not counted,
 * so read around one run, not around a start or stop.
 */
export function cpuBetween(before: CpuReading, after: CpuReading): CpuUse {
  const seconds = (after.at - before.at) / 1000;
  if (seconds <= 0) return { ownCores: 0, otherCores: 0, byRole: {}, seconds: 0 };
  const cores = (ticks: number) => Math.max(0, ticks) / TICKS_PER_SECOND / seconds;
  const byRole: Record<string, number> = {};
  let own = 0;
  for (const [role, ticks] of after.ownTicksByRole) {
    const used = cores(ticks - (before.ownTicksByRole.get(role) ?? ticks));
    own += used;
    if (used > 0) byRole[role] = round2(used);
  }
  const machine = cores(after.machineBusyTicks - before.machineBusyTicks);
  return { ownCores: round2(own), otherCores: round2(Math.max(0, machine - own)), byRole, seconds };
}

/** The role of Apache + mod_auth_openidc's session store, named by the bench (apache-openidc-peer.ts). */
export const APACHE_REDIS_ROLE = 'apache redis-server';

/** Roles given by the bench to processes their command line does not tell apart (a peer's redis-server). */
const NAMED = new Map<number, string>();

/** Gives process `pid` the role `role` in the CPU tables, whatever its command line. */
export function nameProcess(pid: number, role: string): void {
  NAMED.set(pid, role);
}

/** The pids of the processes alive now whose command line (arguments joined by spaces) passes `test`. */
export function processesMatching(test: (command: string) => boolean): number[] {
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && test(commandLine(Number(entry)))).map(Number);
}

/**
 * What a process of the benchmark's tree is, from its command line: `load generator` (this
 * process), `upstream`, `baseline proxy`, `embedded gateway`, `gateway proxy` (primary and
 * workers), `gateway admin`, `redis-server`, `caddy`, `apache httpd` (its parent and children),
 * `grpc target` (grpc-target.ts), a role given by {@link nameProcess}, or `other`.
 */
export function processRole(pid: number): string {
  if (pid === process.pid) return 'load generator';
  const named = NAMED.get(pid);
  if (named !== undefined) return named;
  const command = commandLine(pid);
  if (command.includes('bench-upstream.js')) return 'upstream';
  if (command.includes('baseline-proxy.js')) return 'baseline proxy';
  if (command.includes('grpc-target.js')) return 'grpc target';
  if (command.includes('proxy/process/main.js')) return 'gateway proxy';
  if (command.includes('admin/process/main.js')) return 'gateway admin';
  if (command.includes('admin/process/embedded-main.js')) return 'embedded gateway';
  if (command.startsWith('redis-server')) return 'redis-server';
  if (command.includes('/caddy run')) return 'caddy';
  if (command.includes('/apache2 ')) return 'apache httpd';
  return 'other';
}

/** `/proc/<pid>/cmdline` with its arguments joined by spaces; '' when gone. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** `ppid` and user + system CPU ticks of one process (children not included). */
function readStat(pid: number): { ppid: number; cpuTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: split after its closing one.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // After the name: state(0) ppid(1) … utime(11) stime(12)
    return { ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

/**
 * Waits until other programs on the machine use at most `maxOtherCores` over a `windowMs`
 * window, or until `timeoutMs` has passed.
 * @returns the CPU other programs used in the last window, in cores, and how long it waited, in ms.
 */
export async function waitForQuietMachine(maxOtherCores: number, timeoutMs: number, windowMs = 1_000): Promise<{ otherCores: number; waitedMs: number }> {
  const started = performance.now();
  for (;;) {
    const before = readCpu();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const { otherCores } = cpuBetween(before, readCpu());
    const waitedMs = Math.round(performance.now() - started);
    if (otherCores <= maxOtherCores || waitedMs >= timeoutMs) return { otherCores, waitedMs };
  }
}
