import type { Database } from 'better-sqlite3';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';

/** A host's row of `acme_certificates` (admin/migrations.ts) as the manager reads it; times epoch ms. */
export interface CertificateRow {
  host: string;
  /** The chain, leaf first (PEM); null before the first certificate. */
  certPem: string | null;
  /** The issuing CA's common name. */
  issuer: string | null;
  notBefore: number | null;
  notAfter: number | null;
  /** When to order again (two thirds of the lifetime, or earlier as the CA's renewal information says; design.md §4.15). */
  renewAt: number | null;
  /** The last order's failure (null once one succeeds). */
  lastError: string | null;
  /** Failed orders in a row. */
  failures: number;
  /** Not before this time again after a failure. */
  retryAt: number | null;
}

/** What an issued certificate is stored as. */
export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
  issuer: string;
  notBefore: number;
  notAfter: number;
  renewAt: number;
}

interface RawRow {
  host: string;
  cert_pem: string | null;
  issuer: string | null;
  not_before: number | null;
  not_after: number | null;
  renew_at: number | null;
  last_error: string | null;
  failures: number;
  retry_at: number | null;
}

const COLUMNS = 'host, cert_pem, issuer, not_before, not_after, renew_at, last_error, failures, retry_at';

/**
 * The ACME tables (design.md §4.15): the account key per directory and each host's certificate,
 * private keys sealed at rest with the refresh tokens' cipher (AES-256-GCM, bound to the directory
 * or the host, so a sealed value copied to another row does not open). Every method is one
 * statement or one transaction; SQLite's errors are thrown as they are.
 */
export class AcmeRows {
  readonly #db: Database;
  readonly #cipher: TokenCipher;

  constructor(db: Database, cipher: TokenCipher) {
    this.#db = db;
    this.#cipher = cipher;
  }

  /** The account key (PEM) for `directoryUrl`, made by `create` and stored sealed when there is none. */
  async accountKey(directoryUrl: string, email: string, create: () => Promise<Buffer>): Promise<Buffer> {
    const context = `acme-account:${directoryUrl}`;
    const stored = this.#db.prepare<[string], { key_sealed: string }>('SELECT key_sealed FROM acme_accounts WHERE directory_url = ?').get(directoryUrl);
    if (stored !== undefined) return Buffer.from(this.#cipher.decrypt(stored.key_sealed, context));
    const key = await create();
    this.#db.prepare('INSERT OR IGNORE INTO acme_accounts (directory_url, email, key_sealed, created_at) VALUES (?, ?, ?, ?)')
      .run(directoryUrl, email, this.#cipher.encrypt(key.toString(), context), Date.now());
    return this.accountKey(directoryUrl, email, create);
  }

  /** Records the account's URL at the directory (RFC 8555 §7.3), shown nowhere but kept for operators. */
  setAccountUrl(directoryUrl: string, accountUrl: string): void {
    this.#db.prepare('UPDATE acme_accounts SET account_url = ? WHERE directory_url = ?').run(accountUrl, directoryUrl);
  }

  /** Every host's row, by host. */
  list(): CertificateRow[] {
    return this.#db.prepare<[], RawRow>(`SELECT ${COLUMNS} FROM acme_certificates ORDER BY host`).all().map(rowOf);
  }

  /** Adds rows (no certificate yet) for the hosts that have none. */
  ensure(hosts: Iterable<string>): void {
    const insert = this.#db.prepare('INSERT OR IGNORE INTO acme_certificates (host, updated_at) VALUES (?, ?)');
    this.#db.transaction(() => {
      for (const host of hosts) insert.run(host, Date.now());
    })();
  }

  /** Deletes the rows of hosts no longer served whose certificate (if any) has expired by `now`. */
  forgetExpired(wanted: ReadonlySet<string>, now: number): void {
    for (const row of this.list()) {
      if (!wanted.has(row.host) && (row.notAfter ?? 0) < now) this.#db.prepare('DELETE FROM acme_certificates WHERE host = ?').run(row.host);
    }
  }

  /** The host's private key (PEM), opened; undefined before its first certificate. */
  privateKey(host: string): string | undefined {
    const row = this.#db.prepare<[string], { key_sealed: string | null }>('SELECT key_sealed FROM acme_certificates WHERE host = ?').get(host);
    return row?.key_sealed ? this.#cipher.decrypt(row.key_sealed, `acme-certificate:${host}`) : undefined;
  }

  /**
   * Takes the host's order lease until `until` for `holder`, when nobody else holds a live one
   * (one order per host at a time across every process on this database). Returns whether it did.
   */
  lease(host: string, holder: string, now: number, until: number): boolean {
    const taken = this.#db.prepare('UPDATE acme_certificates SET lease_holder = ?, lease_until = ? WHERE host = ? AND (lease_until IS NULL OR lease_until < ? OR lease_holder = ?)')
      .run(holder, until, host, now, holder);
    return taken.changes === 1;
  }

  /** Stores an issued certificate, clears the failure, and ends `holder`'s lease. */
  issued(host: string, holder: string, certificate: IssuedCertificate): void {
    this.#db.prepare(`UPDATE acme_certificates SET cert_pem = ?, key_sealed = ?, issuer = ?, not_before = ?, not_after = ?, renew_at = ?,
        last_error = NULL, failures = 0, retry_at = NULL, lease_holder = NULL, lease_until = NULL, updated_at = ? WHERE host = ? AND lease_holder = ?`)
      .run(certificate.certPem, this.#cipher.encrypt(certificate.keyPem, `acme-certificate:${host}`), certificate.issuer, certificate.notBefore,
        certificate.notAfter, certificate.renewAt, Date.now(), host, holder);
  }

  /**
   * Sets the renewal time of the host's certificate `certPem` (the CA's renewal information moved
   * it); nothing when the row holds another certificate by now (a renewal finished meanwhile).
   */
  moveRenewal(host: string, certPem: string, renewAt: number): void {
    this.#db.prepare('UPDATE acme_certificates SET renew_at = ?, updated_at = ? WHERE host = ? AND cert_pem = ?').run(renewAt, Date.now(), host, certPem);
  }

  /** Records a failed order (its message, the count in a row, when to try again) and ends `holder`'s lease. */
  failed(host: string, holder: string, message: string, retryAt: number): void {
    this.#db.prepare(`UPDATE acme_certificates SET last_error = ?, failures = failures + 1, retry_at = ?, lease_holder = NULL, lease_until = NULL,
        updated_at = ? WHERE host = ? AND lease_holder = ?`)
      .run(message, retryAt, Date.now(), host, holder);
  }
}

function rowOf(raw: RawRow): CertificateRow {
  return {
    host: raw.host,
    certPem: raw.cert_pem,
    issuer: raw.issuer,
    notBefore: raw.not_before,
    notAfter: raw.not_after,
    renewAt: raw.renew_at,
    lastError: raw.last_error,
    failures: raw.failures,
    retryAt: raw.retry_at,
  };
}
