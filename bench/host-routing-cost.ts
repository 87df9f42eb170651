/**
 * What routing by host (design.md §3.2, proxy/routing/host-routes.ts) costs a path-only request,
 * in the process, with no load: `node dist/bench/host-routing-cost.js`. Three ways of routing the
 * same requests to a host-less service, taken in turns (A/B rounds) in one run, each from the
 * request's path and raw header list to its route, over 100 host-less services:
 * - before: the routing key and one RouteTable lookup, as the data plane routed before hosts;
 * - no hosts: the steps proxy/pipeline/proxy-plane.ts takes now (the reserved prefix, the one
 *   `hasHosts` check, the host-less table), while no service has hosts: what it must cost nothing;
 * - hosts registered: the same while 100 other services name hosts (99 exact, one wildcard), so
 *   the request's `Host` is read and looked up first, finding no service host.
 * The end-to-end check is the interleaved A/B of the embedded stack before and after the change
 * (/work/tools/ab.mjs style, bench/README.md). Prints ns of event loop per request and the ratios.
 */
import { HostRoutes } from '../proxy/routing/host-routes.js';
import { RouteTable, type Route } from '../proxy/routing/route-table.js';
import { routingKey } from '../shared/routing/routing-key.js';
import { isReservedPath } from '../shared/http/gateway-paths.js';
import type { Service } from '../shared/types.js';
import { service } from '../test/support/samples.js';

const CALLS = 2_000_000;
const ROUNDS = 7;
const TARGET = 'http://127.0.0.1:1';
const PATHS = ['/public/bench', '/protected/bench', '/svc-42/a/b?q=1', '/SVC-7/x'];
/** A browser's header list: what `siteOf` scans for `Host`. */
const RAW_HEADERS = ['Host', 'gateway.localhost:8080', 'User-Agent', 'bench', 'Accept', '*/*', 'Cookie', 'gw_session=x'];

/** The data plane's choice of route for a request on no service host (proxy-plane.ts `#pipeline`, §3.2). */
function routeNow(routes: HostRoutes, raw: readonly string[], path: string): Route | undefined {
  const key = routingKey(path);
  if (isReservedPath(key)) return undefined;
  const site = routes.hasHosts ? routes.siteOf(raw) : undefined;
  return (site?.table ?? routes.hostless).lookup(key);
}

function hostless(): Service[] {
  const services = [service({ path: '/public', targetUrl: TARGET }), service({ path: '/protected', targetUrl: TARGET, requireAuth: true })];
  for (let n = 0; services.length < 100; n++) services.push(service({ path: `/svc-${n}`, targetUrl: TARGET }));
  return services;
}

function hostServices(): Service[] {
  const services = [service({ path: '/', targetUrl: TARGET, hosts: ['*.apps.localhost'] })];
  for (let n = 0; services.length < 100; n++) services.push(service({ path: '/', targetUrl: TARGET, hosts: [`app-${n}.localhost`] }));
  return services;
}

function main(): void {
  const before = new RouteTable(hostless());
  const noHosts = new HostRoutes(hostless());
  const withHosts = new HostRoutes([...hostless(), ...hostServices()]);
  const variants = {
    before: (path: string) => before.lookup(routingKey(path)),
    'no hosts': (path: string) => routeNow(noHosts, RAW_HEADERS, path),
    'hosts registered': (path: string) => routeNow(withHosts, RAW_HEADERS, path),
  };
  const timings: Record<keyof typeof variants, number[]> = { before: [], 'no hosts': [], 'hosts registered': [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.entries(variants) as [keyof typeof variants, (path: string) => Route | undefined][];
    if (round % 2 === 1) order.reverse();
    for (const [name, route] of order) {
      const started = performance.now();
      for (let n = 0; n < CALLS; n++) if (route(PATHS[n & 3]!) === undefined) throw new Error(`${name}: no route`);
      if (round > 0) timings[name].push(((performance.now() - started) * 1e6) / CALLS); // round 0 warms up
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const base = median(timings.before);
  console.log(`path-only route per request, median of ${ROUNDS - 1} rounds of ${CALLS.toLocaleString('en')} calls`);
  for (const [name, values] of Object.entries(timings)) {
    const ns = median(values);
    console.log(`  ${name.padEnd(17)} ${ns.toFixed(1).padStart(7)} ns  (${(ns / base).toFixed(2)}× before, ${ns - base >= 0 ? '+' : ''}${(ns - base).toFixed(1)} ns)`);
  }
}

main();
