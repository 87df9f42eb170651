/**
 * A machine client of the test identity provider, as `curl` is in README "Machine clients": the
 * client credentials grant (RFC 6749 §4.4) at the discovered token endpoint, authenticating with
 * `client_secret_basic` (RFC 6749 §2.3.1), asking for a token for one `resource` (RFC 8707 §2).
 */
import { request } from 'undici';

/** What a machine client knows: who it is and which API it wants a token for. */
export interface MachineClientRequest {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The resource indicator, the token's `aud`. */
  resource: string;
}

/**
 * Resolves with the access token the provider issues.
 * @throws when discovery or the token request does not answer 200 (the message has the error body).
 */
export async function clientCredentialsToken(client: MachineClientRequest): Promise<string> {
  const discovery = await request(`${client.issuer}/.well-known/openid-configuration`);
  if (discovery.statusCode !== 200) throw new Error(`discovery answered ${discovery.statusCode}`);
  const { token_endpoint: tokenEndpoint } = (await discovery.body.json()) as { token_endpoint: string };
  // RFC 6749 §2.3.1: both parts form-urlencoded before the Basic encoding.
  const basic = Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString('base64');
  const response = await request(tokenEndpoint, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', resource: client.resource }).toString(),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`token endpoint answered ${response.statusCode}: ${text}`);
  return (JSON.parse(text) as { access_token: string }).access_token;
}
