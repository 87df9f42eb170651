import * as x509 from '@peculiar/x509';
import acme from 'acme-client';
import { Agent, request } from 'undici';
import type { AcmeSettings } from '../../shared/config/tls-settings.js';
import { trustedCertificates } from './acme-account.js';

/** How long one read of the directory is used, in ms: many certificates asked about at once share it. */
const DIRECTORY_MAX_AGE_MS = 3600_000;
/** How long one request to the CA may take, in ms. */
const REQUEST_TIMEOUT_MS = 10_000;
/** RFC 9773 §4.3: a Retry-After under a minute counts as a minute, one over a day as a day; in ms. */
const MIN_RETRY_AFTER_MS = 60_000;
const MAX_RETRY_AFTER_MS = 86_400_000;

/** The window a CA suggests renewing a certificate in (RFC 9773 §4.2), epoch ms, `start` < `end`. */
export interface SuggestedWindow {
  start: number;
  end: number;
}

/** What the CA answers about one certificate (RFC 9773 §4.2). */
export interface RenewalInfo {
  window: SuggestedWindow;
  /** When to ask again, in ms from now (Retry-After, held to 1 minute … 1 day); undefined when the CA sent none. */
  retryAfterMs: number | undefined;
  /** A page the CA gives to explain the window (an incident, a revocation), for operators. */
  explanationUrl: string | undefined;
}

/**
 * The certificate's ARI identifier (RFC 9773 §4.1): base64url (unpadded) of its Authority Key
 * Identifier's keyIdentifier, `.`, base64url of its serial number's DER content octets (a positive
 * INTEGER: a leading zero byte when the first bit is set, RFC 5280 §4.1.2.2).
 * @param chainPem the chain, leaf first (PEM); only the leaf is read.
 * @throws when the leaf cannot be parsed or has no keyIdentifier (RFC 5280 §4.2.1.1 requires one of a CA).
 */
export function certificateId(chainPem: string): string {
  const leaf = new x509.X509Certificate(acme.crypto.splitPemChain(chainPem)[0]!);
  const keyId = leaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
  if (keyId === undefined) throw new Error('the certificate has no Authority Key Identifier to name it by (RFC 9773 §4.1)');
  // @peculiar/x509 gives the serial without the DER sign byte; put it back when it is needed.
  const serial = Buffer.from(leaf.serialNumber, 'hex');
  const der = serial[0]! & 0x80 ? Buffer.concat([Buffer.of(0), serial]) : serial;
  return `${Buffer.from(keyId, 'hex').toString('base64url')}.${der.toString('base64url')}`;
}

/**
 * ACME Renewal Information at ACME_DIRECTORY_URL's CA (RFC 9773): whether its directory offers the
 * `renewalInfo` resource, and the suggested window of a certificate there, asked by an
 * unauthenticated GET (§4.1). ACME_CA_FILE is trusted beside the system's roots, as for the
 * directory's other resources (acme-account.ts).
 */
export class RenewalInfoClient {
  readonly #directoryUrl: string;
  readonly #agent: Agent;
  #directory: { renewalInfo: string | undefined; readAt: number } | undefined;

  constructor(settings: AcmeSettings) {
    this.#directoryUrl = settings.directoryUrl.href;
    const ca = trustedCertificates(settings);
    this.#agent = new Agent({ connect: ca === undefined ? {} : { ca } });
  }

  /**
   * The directory's `renewalInfo` URL (RFC 9773 §3), undefined when the CA offers none; the
   * directory is read again after an hour.
   * @throws when the directory cannot be read (network, status other than 200, no JSON object).
   */
  async renewalInfoUrl(now = Date.now()): Promise<string | undefined> {
    if (this.#directory === undefined || now - this.#directory.readAt > DIRECTORY_MAX_AGE_MS) {
      const { body } = await this.#get(this.#directoryUrl);
      const renewalInfo = (body as Record<string, unknown>).renewalInfo;
      this.#directory = { renewalInfo: typeof renewalInfo === 'string' ? renewalInfo : undefined, readAt: now };
    }
    return this.#directory.renewalInfo;
  }

  /**
   * The CA's renewal information of the certificate `certId` ({@link certificateId}) at
   * `renewalInfoUrl`: `GET <renewalInfoUrl>/<certId>` (RFC 9773 §4.1).
   * @throws when the CA does not answer 200 with a valid window (RFC 9773 §4.2: an `end` not after
   *   its `start` is treated as no answer), or the network fails.
   */
  async fetch(renewalInfoUrl: string, certId: string, now = Date.now()): Promise<RenewalInfo> {
    const { body, retryAfter } = await this.#get(`${renewalInfoUrl.replace(/\/$/, '')}/${certId}`);
    const { suggestedWindow, explanationURL } = body as { suggestedWindow?: { start?: unknown; end?: unknown }; explanationURL?: unknown };
    const window = { start: Date.parse(String(suggestedWindow?.start)), end: Date.parse(String(suggestedWindow?.end)) };
    if (!(window.start < window.end)) throw new Error('the CA\'s renewal information has no valid suggestedWindow');
    return { window, retryAfterMs: retryAfterMs(retryAfter, now), explanationUrl: typeof explanationURL === 'string' ? explanationURL : undefined };
  }

  /** Stops the connections to the CA. */
  close(): void {
    void this.#agent.close();
  }

  async #get(url: string): Promise<{ body: object; retryAfter: string | undefined }> {
    const response = await request(url, { dispatcher: this.#agent, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`${url} answered ${response.statusCode}`);
    }
    const body: unknown = await response.body.json();
    if (typeof body !== 'object' || body === null) throw new Error(`${url} answered no JSON object`);
    const retryAfter = response.headers['retry-after'];
    return { body, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
  }
}

/** A Retry-After value (RFC 9110 §10.2.3: seconds, or an HTTP date) as ms from `now`, held to RFC 9773 §4.3's bounds; undefined when absent or unreadable. */
function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1_000 : Date.parse(value) - now;
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(ms, MIN_RETRY_AFTER_MS), MAX_RETRY_AFTER_MS);
}
