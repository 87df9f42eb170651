/**
 * The process of verifying-upstream.ts: an upstream app that trusts nothing but the gateway's
 * identity assertion, verified exactly as README "Identity assertion" shows it (jose's
 * createRemoteJWKSet on the gateway's `/.well-known/jwks.json`, issuer PUBLIC_URL, audience its
 * service's public URL), nothing else configured. Started with GATEWAY (PUBLIC_URL) and AUDIENCE;
 * does nothing without them. Prints `listening <port>` once it listens on 127.0.0.1.
 * Every request is answered with a {@link Verdict} as JSON: 200 with the verified claims, or 401
 * with jose's error code (`ERR_JWT_EXPIRED`, `ERR_JWKS_NO_MATCHING_KEY`, …).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';

/** What the upstream answers. */
export interface Verdict {
  /** The verified claims, when verified. */
  payload?: JWTPayload;
  /** The `kid` of the verified assertion's header. */
  kid?: string;
  /** jose's error code, when not verified. */
  error?: string;
  /** The `X-Gatehouse-Assertion` it received, as it was. */
  assertion?: string;
}

function serve(GATEWAY: string, AUDIENCE: string): void {
  // README "Identity assertion", as an upstream writes it:
  const JWKS = createRemoteJWKSet(new URL('/.well-known/jwks.json', GATEWAY));
  const server = createServer(async (req, res) => {
    const assertion = req.headers['x-gatehouse-assertion'] as string | undefined;
    try {
      const { payload } = await jwtVerify(req.headers['x-gatehouse-assertion'] as string, JWKS, { issuer: GATEWAY, audience: AUDIENCE });
      reply(res, 200, { payload, kid: decodeProtectedHeader(assertion!).kid, assertion });
    } catch (error) {
      reply(res, 401, { error: (error as { code?: string }).code ?? String(error), assertion });
    }
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
}

function reply(res: ServerResponse, status: number, verdict: Verdict): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(verdict));
}

const { GATEWAY, AUDIENCE } = process.env;
if (GATEWAY && AUDIENCE) serve(GATEWAY, AUDIENCE);
