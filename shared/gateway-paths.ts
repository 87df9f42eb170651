/**
 * Paths the gateway serves itself (DESIGN §2): the data plane hands them to the admin plane, and
 * no service may be registered at or under them. `/` is the gateway's home page only while no
 * service is registered at `/`.
 */
export const GATEWAY_PREFIXES: readonly string[] = ['/auth', '/api', '/dashboard'];

/** True when `path` (a raw request path without query) is `/p` or under `/p/` for a gateway prefix. */
export function isGatewayPath(path: string): boolean {
  for (const prefix of GATEWAY_PREFIXES) {
    if (path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 47)) {
      return true;
    }
  }
  return false;
}
