/**
 * Bearer tokens a gateway must refuse (design.md §4.7), made from real ones of the test identity
 * provider: each fails one check. Shared by the data-plane, embedded and split-mode tests.
 */
import { SignJWT, UnsecuredJWT, decodeProtectedHeader } from 'jose';
import { startIdentityProvider, type IdentityProvider, type IdentityProviderMachineClient } from './identity-provider.js';
import { clientCredentialsToken } from './machine-client.js';

/** A machine client of an identity provider, asking for tokens for `resource`. */
export interface MachineClient {
  idp: IdentityProvider;
  client: IdentityProviderMachineClient;
  resource: string;
}

/** A token for `machine` (its `resource` unless another is given). */
export function tokenFor(machine: MachineClient, resource = machine.resource): Promise<string> {
  const { idp, client } = machine;
  return clientCredentialsToken({ issuer: idp.issuer, clientId: client.clientId, clientSecret: client.clientSecret, resource });
}

/**
 * One bad token per check, by what is wrong with it: `exp` passed, `nbf` ahead, another `aud`
 * (forged, and a real token for `otherResource`), another `iss` (forged with the real key, and a
 * real token of another provider), a signature by another key under the real `kid`, `alg: none`
 * (plain, and under the real `kid`), HS256 (the algorithm-confusion attack), not a JWT at all, and
 * no credentials after the scheme. The provider must offer `otherResource` too.
 */
export async function badBearerTokens(machine: MachineClient, otherResource: string): Promise<Record<string, string>> {
  const { idp } = machine;
  const { kid } = decodeProtectedHeader(await tokenFor(machine));
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: idp.issuer, aud: machine.resource, sub: 'intruder', iat: now, exp: now + 600 };
  const cases: Record<string, string> = {};
  for (const kind of ['expired', 'not-yet-valid', 'wrong-aud', 'wrong-iss', 'bad-signature'] as const) {
    idp.tamperNextAccessToken(kind);
    cases[kind] = await tokenFor(machine);
  }
  cases['a real token for another audience'] = await tokenFor(machine, otherResource);
  const other = await startIdentityProvider({ clients: [], machineClients: [machine.client], apiResources: [machine.resource] });
  try {
    cases['a real token of another identity provider'] = await tokenFor({ ...machine, idp: other });
  } finally {
    await other.close();
  }
  cases['alg none'] = new UnsecuredJWT(claims).encode();
  cases['alg none under the real kid'] = `${b64url({ alg: 'none', kid, typ: 'at+jwt' })}.${b64url(claims)}.`;
  const secret = new TextEncoder().encode('a-shared-secret-the-gateway-never-accepts');
  cases['HS256 under the real kid'] = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid }).sign(secret);
  cases['not a JWT'] = 'opaque-access-token';
  cases['no credentials after the scheme'] = '';
  return cases;
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}
