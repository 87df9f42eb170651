import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { rootCertificates } from 'node:tls';
import acme from 'acme-client';
import type { AcmeSettings } from '../../shared/config/tls-settings.js';
import type { AcmeRows } from './acme-rows.js';

/**
 * acme-client's own retries of a failed request (a network error, 429, 5xx), before the order
 * fails: one, a second later. The manager's backoff (renewal-policy.ts) retries whole orders, so
 * a CA outage costs no minute-long wait inside one order.
 */
const REQUEST_RETRIES = 1;
const REQUEST_RETRY_DELAY_S = 1;

/**
 * The CA certificates (PEM) trusted for the TLS of ACME_DIRECTORY_URL's server: the system's and
 * ACME_CA_FILE's; undefined without ACME_CA_FILE (the system's alone, a client's default).
 * @throws when ACME_CA_FILE cannot be read (the configuration checked it at start).
 */
export function trustedCertificates(settings: AcmeSettings): string[] | undefined {
  return settings.caFile === undefined ? undefined : [...rootCertificates, readFileSync(settings.caFile, 'utf8')];
}

/**
 * The gateway's ACME account at ACME_DIRECTORY_URL (RFC 8555 §7.3): its key (EC P-256) is made at
 * the first order and kept sealed in the database (acme-rows.ts); the account is looked up again
 * (newAccount with the same key answers the existing one, §7.3.1) before each batch of orders, so a
 * CA that lost it (a test server restarted) gets it registered anew. ACME_CA_FILE's certificates
 * are trusted beside the system's for the directory's TLS. acme-client's settings are global to
 * its module; only the admin process loads it.
 */
export class AcmeAccount {
  readonly #settings: AcmeSettings;
  readonly #rows: AcmeRows;

  constructor(settings: AcmeSettings, rows: AcmeRows) {
    this.#settings = settings;
    this.#rows = rows;
    const ca = trustedCertificates(settings);
    acme.axios.defaults.httpsAgent = new Agent({ keepAlive: true, ...(ca && { ca }) });
    // acme-client's own field on its axios instance's defaults (src/axios.js), absent from the types.
    const defaults = acme.axios.defaults as unknown as { acmeSettings: Record<string, unknown> };
    defaults.acmeSettings = { ...defaults.acmeSettings, retryMaxAttempts: REQUEST_RETRIES, retryDefaultDelay: REQUEST_RETRY_DELAY_S };
  }

  /**
   * A client signed in to the account, registered when the CA does not know it (terms of service
   * agreed, ACME_EMAIL as `mailto:` contact).
   * @throws what the CA or the network answers (the directory unreachable, a refused contact).
   */
  async client(): Promise<acme.Client> {
    const directoryUrl = this.#settings.directoryUrl.href;
    const accountKey = await this.#rows.accountKey(directoryUrl, this.#settings.email, () => acme.crypto.createPrivateEcdsaKey('P-256'));
    // Status polls (RFC 8555 §7.5.1): from half a second, at most 5 s apart, about a minute in all.
    const client = new acme.Client({ directoryUrl, accountKey, backoffAttempts: 15, backoffMin: 500, backoffMax: 5_000 });
    await client.createAccount({ termsOfServiceAgreed: true, contact: [`mailto:${this.#settings.email}`] });
    this.#rows.setAccountUrl(directoryUrl, client.getAccountUrl());
    return client;
  }
}
