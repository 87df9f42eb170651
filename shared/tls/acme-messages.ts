/**
 * What the admin process, which orders certificates by ACME (design.md §4.15), tells every process
 * that serves TLS: the challenges it is answering now, and which certificates it holds. Both
 * travel as whole snapshots on the event bus (in-process, or Redis in split mode), so a process
 * started later, or one that missed a notice, reads the current state. Neither holds a private
 * key of a certificate the gateway serves: those are fetched from the admin process
 * (fetched-certificate-feed.ts).
 */

/** A TLS-ALPN-01 challenge certificate (RFC 8737 §3) and its throwaway key, PEM; proves nothing once the authorization is done. */
export interface AlpnChallengeCertificate {
  cert: string;
  key: string;
}

/** The challenges under way (RFC 8555 §8), whichever proxy process the CA reaches answers them. */
export interface AcmeChallengeSet {
  /** HTTP-01 (RFC 8555 §8.3): token → key authorization, served at `/.well-known/acme-challenge/<token>`. */
  http01: Readonly<Record<string, string>>;
  /** TLS-ALPN-01 (RFC 8737): host (lowercase) → the certificate a handshake offering `acme-tls/1` for it gets. */
  tlsAlpn01: Readonly<Record<string, AlpnChallengeCertificate>>;
}

/** No challenge under way. */
export const NO_CHALLENGES: AcmeChallengeSet = Object.freeze({ http01: {}, tlsAlpn01: {} });

/** One host whose certificate ACME keeps, and the SHA-256 fingerprint (hex) of the one it holds now (null: none yet). */
export interface NoticedCertificate {
  host: string;
  fingerprint: string | null;
}

/**
 * The admin process's certificates, public parts only: every host it serves by ACME, and the
 * bearer token a proxy process presents to fetch the pairs from ADMIN_INTERNAL_URL
 * (`GET /internal/certificates`), drawn anew at each start of the admin process.
 */
export interface CertificateNotice {
  certificates: readonly NoticedCertificate[];
  fetchToken: string;
}

/** Whether `value` (from another process) is an {@link AcmeChallengeSet}. */
export function isAcmeChallengeSet(value: unknown): value is AcmeChallengeSet {
  if (!isRecord(value) || !isRecord(value.http01) || !isRecord(value.tlsAlpn01)) return false;
  const alpn = Object.values(value.tlsAlpn01);
  return Object.values(value.http01).every((text) => typeof text === 'string')
    && alpn.every((entry) => isRecord(entry) && typeof entry.cert === 'string' && typeof entry.key === 'string');
}

/** Whether `value` (from another process) is a {@link CertificateNotice}. */
export function isCertificateNotice(value: unknown): value is CertificateNotice {
  if (!isRecord(value) || typeof value.fetchToken !== 'string' || !Array.isArray(value.certificates)) return false;
  return value.certificates.every((entry: unknown) => isRecord(entry) && typeof entry.host === 'string' && (entry.fingerprint === null || typeof entry.fingerprint === 'string'));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The admin process's answer to `GET /internal/certificates` (ADMIN_INTERNAL_URL): each host's pair, PEM. */
export interface CertificateBundle {
  certificates: ReadonlyArray<{ host: string; cert: string; key: string }>;
}

/** The path on ADMIN_INTERNAL_URL where proxy processes fetch the pairs, with the notice's fetch token as a bearer token. */
export const CERTIFICATE_FETCH_PATH = '/internal/certificates';

/** Whether `value` (from the admin process) is a {@link CertificateBundle}. */
export function isCertificateBundle(value: unknown): value is CertificateBundle {
  return isRecord(value) && Array.isArray(value.certificates)
    && value.certificates.every((entry: unknown) => isRecord(entry) && typeof entry.host === 'string' && typeof entry.cert === 'string' && typeof entry.key === 'string');
}
