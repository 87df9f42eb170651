import { GatewayError } from '../../shared/errors.js';

/**
 * Where a service is reached, and which services may not be reached at the same place (design.md
 * §5): a host-less service by its path on every host no service names, a service with
 * hosts by its path on each of them. Host-less paths are unique ignoring case, as the data plane
 * routes on a lowercased key; so are `(host, path)` pairs, hosts compared in their normal form
 * (shared/services/host-names.ts): `*.a.com` and `x.a.com` are two hosts. Pure functions; the
 * registry and the registry document check their writes with them.
 */

/** What a route is made of: a service's path and hosts (absent or `[]` for none). */
export interface Routed {
  path: string;
  hosts?: readonly string[] | undefined;
}

/** The host of a route key that stands for "no host": no host name is empty. */
const NO_HOST = '';

/**
 * The keys of the places `service` is reached at, one per host (or one for a host-less service):
 * two services may not share a key. `<host> <lowercased path>`; neither holds a space.
 */
export function routeKeys(service: Routed): string[] {
  const path = service.path.toLowerCase();
  return (service.hosts?.length ? service.hosts : [NO_HOST]).map((host) => `${host} ${path}`);
}

/** The host of a route key, or undefined for a host-less one. */
const hostOfKey = (key: string): string | undefined => key.slice(0, key.indexOf(' ')) || undefined;

/**
 * The place both services are reached at, or undefined when there is none: `{ host }` naming the
 * first host of `a` that `b` has at the same path in any case, `{ host: undefined }` when both are
 * host-less at it.
 */
export function sharedRoute(a: Routed, b: Routed): { host: string | undefined } | undefined {
  const keys = new Set(routeKeys(b));
  const key = routeKeys(a).find((candidate) => keys.has(candidate));
  return key === undefined ? undefined : { host: hostOfKey(key) };
}

/**
 * PATH_IN_USE (409) for `path`, taken on `host`. Host-less, the interface's answer as it is
 * (`{"error":"Path already in use"}`); on a host, the same message with `fields` naming the pair,
 * by the fields that make it, so the console shows it beside them:
 * `{ "hosts": "app.example.com already has a service at /", "path": "is already in use on app.example.com" }`.
 */
export function routeInUse(path: string, host: string | undefined): GatewayError {
  if (host === undefined) return new GatewayError('PATH_IN_USE');
  return new GatewayError('PATH_IN_USE', { fields: { hosts: `${host} already has a service at ${path}`, path: `is already in use on ${host}` } });
}
