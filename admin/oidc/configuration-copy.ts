import * as client from 'openid-client';

/** How the relying party's configuration is made (discovery's options), so that a copy is made alike. */
export interface ConfigurationSetup {
  clientId: string;
  clientAuthentication: client.ClientAuth;
  /** openid-client's extensions (`enableNonRepudiationChecks`, `allowInsecureRequests`). */
  execute: Array<(configuration: client.Configuration) => void>;
  /** Per request, in seconds (openid-client's unit). */
  timeout: number;
}

/**
 * Runs `use` with a copy of `shared` whose requests go through `fetch`. openid-client 6 takes its
 * fetch from the configuration, not from each call, so a call recorded under one request's span
 * needs a configuration of its own (made only for sampled requests: a copy of the metadata, no
 * request). The copy starts with the JWKS `shared` holds, and `shared` keeps the JWKS the copy
 * fetched (the first sign-in's, or after the 5 minutes oauth4webapi keeps one), so a traced call
 * asks the provider nothing an untraced one would not.
 */
export async function withFetch<T>(shared: client.Configuration, setup: ConfigurationSetup, fetch: client.CustomFetch, use: (configuration: client.Configuration) => Promise<T>): Promise<T> {
  const copy = new client.Configuration(shared.serverMetadata(), setup.clientId, shared.clientMetadata(), setup.clientAuthentication);
  for (const extension of setup.execute) extension(copy);
  copy.timeout = setup.timeout;
  copy[client.customFetch] = fetch;
  const known = client.getJwksCache(shared);
  if (known !== undefined) client.setJwksCache(copy, known);
  try {
    return await use(copy);
  } finally {
    const fetched = client.getJwksCache(copy);
    if (fetched !== undefined && fetched.uat !== known?.uat) client.setJwksCache(shared, fetched);
  }
}
