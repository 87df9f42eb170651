/**
 * Summaries of a V8 CPU profile (`node --cpu-prof`, a `.cpuprofile` JSON file): where the time
 * went, by function (self time), by place in the code (package, Node internals, or our folder),
 * and by our own functions including what they call (total time).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  /** 0-based. */
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  /** µs. */
  startTime: number;
  endTime: number;
  samples: number[];
}

/** A row of a summary: a name and its share of the profile's samples. */
export interface ProfileRow {
  name: string;
  /** Share of all samples, 0–100. */
  percent: number;
  /** Time, in ms. */
  ms: number;
}

export interface ProfileSummary {
  /** Profile length, in ms. */
  durationMs: number;
  /** Share of samples not idle (not `(idle)`, `(program)` counted as busy), 0–100. */
  busyPercent: number;
  /** Functions by self time. */
  selfByFunction: ProfileRow[];
  /** Self time grouped by where the code lives: an npm package, `node:` internals, `(gc)`, or our own folder. */
  selfByPlace: ProfileRow[];
  /** Our own functions (dist/ outside node_modules) by total time: self plus everything they call. */
  totalByOwnFunction: ProfileRow[];
  /**
   * Every sample charged to the innermost of our functions on its stack (what of ours caused the
   * work, library and native code included); `(none of ours)` for work with none of our frames
   * (socket reads, HTTP parsing, timers, GC).
   */
  selfByInnermostOwnFunction: ProfileRow[];
}

/** Reads and summarises one `.cpuprofile` file; each list keeps its `top` largest rows. */
export function summariseCpuProfile(path: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const durationMs = (profile.endTime - profile.startTime) / 1000;
  const totalSamples = profile.samples.length || 1;
  const msPerSample = durationMs / totalSamples;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));

  const self = new Map<string, number>();
  const place = new Map<string, number>();
  let idle = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    if (node.callFrame.functionName === '(idle)') idle += hits;
    add(self, frameName(node.callFrame), hits);
    add(place, placeOf(node.callFrame), hits);
  }

  // Total time of our own functions: each sample counts once per function on its stack.
  // Innermost: each node's own samples go to the nearest of our functions at or above it.
  const total = new Map<string, number>();
  const innermost = new Map<string, number>();
  const root = profile.nodes[0];
  const walk = (node: ProfileNode, onStack: Set<string>, nearestOwn: string): number => {
    let hits = node.hitCount ?? 0;
    const key = isOwn(node.callFrame) ? frameName(node.callFrame) : undefined;
    const own = key ?? nearestOwn;
    if (hits > 0 && node.callFrame.functionName !== '(idle)') add(innermost, own, hits);
    const entered = key !== undefined && !onStack.has(key);
    if (entered) onStack.add(key);
    for (const child of node.children ?? []) hits += walk(byId.get(child)!, onStack, own);
    if (entered) {
      onStack.delete(key);
      add(total, key, hits);
    }
    return hits;
  };
  if (root) walk(root, new Set(), '(none of ours)');

  const rows = (map: Map<string, number>) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, hits]) => ({ name, percent: round1((hits / totalSamples) * 100), ms: Math.round(hits * msPerSample) }));
  return {
    durationMs: Math.round(durationMs),
    busyPercent: round1(((totalSamples - idle) / totalSamples) * 100),
    selfByFunction: rows(self),
    selfByPlace: rows(place),
    totalByOwnFunction: rows(total),
    selfByInnermostOwnFunction: rows(innermost),
  };
}

function frameName(frame: CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  return `${name} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
}

function placeOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  const url = frame.url;
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return `npm ${modules[1]}`;
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  const own = /\/dist\/([^/]+)\//.exec(url);
  if (own) return `ours: ${own[1]}/`;
  return shortUrl(url);
}

function isOwn(frame: CallFrame): boolean {
  return frame.url.includes('/dist/') && !frame.url.includes('node_modules');
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist >= 0) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

function add(map: Map<string, number>, key: string, value: number): void {
  map.set(key, (map.get(key) ?? 0) + value);
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
