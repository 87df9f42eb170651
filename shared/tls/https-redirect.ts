import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createGatewayServer } from '../http/http-server.js';
import type { ChallengeResponder } from './challenge-responder.js';

/**
 * HTTP_PORT's listener (README "TLS"): every request gets 308 Permanent Redirect (RFC 9110
 * §15.4.9, which keeps the method and body, unlike 301) to the same path and query on https.
 * Never an open redirect: the target's origin is one of `origins` (PUBLIC_URL's, ADMIN_URL's)
 * whose host the request's `Host` names (case-insensitively, a trailing dot and a port ignored),
 * with that origin's port; any other `Host`, or none, is sent to the first origin's `/`. Never
 * sends Strict-Transport-Security (RFC 6797 §7.2: not over plain HTTP).
 *
 * With certificates by ACME, `challenges` answers HTTP-01 challenges (RFC 8555 §8.3,
 * `/.well-known/acme-challenge/<token>`) before the redirect (design.md §4.15).
 */
export function createHttpsRedirectServer(origins: readonly URL[], challenges?: ChallengeResponder): Server {
  const byHost = new Map<string, string>();
  for (const origin of [...origins].reverse()) byHost.set(origin.hostname.toLowerCase(), origin.origin);
  const fallback = origins[0]!.origin;
  const redirecting = (req: IncomingMessage, res: ServerResponse) => redirect(req, res, byHost, fallback);
  return createGatewayServer(challenges ? challenges.http01(redirecting) : redirecting);
}

function redirect(req: IncomingMessage, res: ServerResponse, byHost: ReadonlyMap<string, string>, fallback: string): void {
  const origin = byHost.get(hostName(req.headers.host));
  // Origin-form only (RFC 9112 §3.2.1): an absolute-form or `*` target would be glued onto the origin as text.
  const target = origin !== undefined && req.url?.startsWith('/') ? origin + req.url : `${fallback}/`;
  res.writeHead(308, { location: target, 'content-length': 0, 'cache-control': 'no-store' });
  res.end();
}

/** `Host`'s name: lowercased, without port or trailing dot (`[::1]:80` → `[::1]`). */
function hostName(host: string | undefined): string {
  if (host === undefined) return '';
  const lower = host.toLowerCase();
  const name = lower.startsWith('[') ? lower.slice(0, lower.indexOf(']') + 1) : lower.split(':')[0]!;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}
