import { validationError } from '../http/json-body-validation.js';
import { isWildcardHost, normalizeHost, WILDCARD_PREFIX } from '../../shared/services/host-names.js';

/**
 * Host names no service may list (design.md §5): ADMIN_URL's, when it is set and is not
 * PUBLIC_URL's host. That host is the console's and the admin API's origin; browsers send its
 * cookies whatever the port (RFC 6265 §8.5) and count its pages same-site with it, so an upstream
 * app must not be served there, not even on the public port. PUBLIC_URL's own host may be listed:
 * the gateway's paths still win there (the data plane's rule), and naming it turns that host's
 * routing to host services only, which README says.
 */

/** The reserved host names for this configuration, in the normal form (an IP address reserves nothing: no service can list one). */
export function reservedHosts(publicUrl: URL, adminUrl: URL | undefined): string[] {
  const admin = adminUrl && normalizeHost(adminUrl.hostname);
  return admin !== undefined && admin !== normalizeHost(publicUrl.hostname) ? [admin] : [];
}

/** True when `pattern` (a normal form, maybe a wildcard) names `host` (a normal form): itself, or one label under a wildcard. */
export function namesHost(pattern: string, host: string): boolean {
  if (!isWildcardHost(pattern)) return pattern === host;
  const suffix = pattern.slice(WILDCARD_PREFIX.length - 1);
  return host.endsWith(suffix) && !host.slice(0, -suffix.length).includes('.') && host.length > suffix.length;
}

/** Why `hosts` may not be listed, naming the first that names a reserved host, or undefined. */
export function reservedHostProblem(hosts: readonly string[], reserved: readonly string[]): string | undefined {
  for (const host of hosts) {
    const taken = reserved.find((name) => namesHost(host, name));
    if (taken !== undefined) return `must not name ADMIN_URL's host ${taken}, which serves the console (got ${JSON.stringify(host)})`;
  }
  return undefined;
}

/**
 * A service's hosts name no reserved host.
 * @throws {GatewayError} BAD_REQUEST `Invalid service: hosts must not name ADMIN_URL's host …` with `fields.hosts`.
 */
export function assertHostsAllowed(hosts: readonly string[], reserved: readonly string[]): void {
  const problem = reservedHostProblem(hosts, reserved);
  if (problem !== undefined) throw validationError('Invalid service', { hosts: problem }, []);
}
