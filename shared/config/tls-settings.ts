import { readdirSync, readFileSync } from 'node:fs';
import { errorCode } from '../error-code.js';

/**
 * Where one listener's certificates come from (README "TLS", "Certificates by ACME"): a default
 * pair of PEM files (the certificate with its chain, and its key), served for a name the directory
 * has no pair for and to clients that send no SNI; a directory of more pairs chosen by SNI
 * (`<name>.crt` + `<name>.key`, `_wildcard.<domain>` for `*.<domain>`); and the certificates the
 * admin process obtains by ACME. At least one of the three is set.
 */
export interface ListenerCertificates {
  /** TLS_CERT_FILE + TLS_KEY_FILE (or ADMIN_TLS_*): paths, and the variables that named them (for messages). */
  defaultPair: { certFile: string; keyFile: string; variables: string } | undefined;
  /** TLS_CERTS_DIR. */
  directory: string | undefined;
  /** Whether certificates by ACME are served here too (ACME_EMAIL set; files win for the names they have). */
  acme: boolean;
}

/**
 * Certificates by ACME (RFC 8555; design.md §4.15), on when ACME_EMAIL is set: the account's
 * contact, the CA's directory, and the CA certificates trusted for the directory's own TLS.
 */
export interface AcmeSettings {
  /** ACME_EMAIL: the account's contact (RFC 8555 §7.3, a `mailto:` URL is made of it). */
  email: string;
  /** ACME_DIRECTORY_URL: the CA's directory (RFC 8555 §7.1.1), https. */
  directoryUrl: URL;
  /** ACME_CA_FILE: PEM file of CA certificates trusted for the directory's TLS besides the system's (a private CA); undefined: the system's. */
  caFile: string | undefined;
}

/**
 * TLS on the gateway's own listeners (design.md §4.14): `public` for PORT (set when TLS_CERT_FILE
 * or TLS_CERTS_DIR is), `admin` for ADMIN_PORT (when ADMIN_URL is https and TLS files are set);
 * `httpPort`, HTTP_PORT's plain listener that redirects to https; `hsts`, the
 * Strict-Transport-Security value of every https answer (RFC 6797 §6.1; undefined: not sent).
 */
export interface TlsSettings {
  public: ListenerCertificates | undefined;
  admin: ListenerCertificates | undefined;
  httpPort: number | undefined;
  hsts: string | undefined;
  /** Certificates by ACME; undefined: off (ACME_EMAIL unset). */
  acme: AcmeSettings | undefined;
}

/** The TLS variables as read (trimmed; undefined when unset), with the URLs they depend on. */
export interface TlsVariables {
  PUBLIC_URL: URL;
  ADMIN_URL?: URL | undefined;
  TLS_CERT_FILE?: string | undefined;
  TLS_KEY_FILE?: string | undefined;
  TLS_CERTS_DIR?: string | undefined;
  ADMIN_TLS_CERT_FILE?: string | undefined;
  ADMIN_TLS_KEY_FILE?: string | undefined;
  HTTP_PORT?: number | undefined;
  HSTS: string;
  ACME_EMAIL?: string | undefined;
  ACME_DIRECTORY_URL: string;
  ACME_CA_FILE?: string | undefined;
}

/** `max-age=<seconds>` with RFC 6797 §6.1's optional directives, in any case. */
const HSTS_VALUE = /^max-age=\d{1,10}(\s*;\s*(includeSubDomains|preload))*$/i;

/**
 * The TLS settings the variables describe. Problems are pushed to `problems` as `<VARIABLE>: <what
 * is wrong>` (the result is then meaningless): a certificate without its key or the other way
 * round; a file or directory that cannot be read now (so a start fails naming it, where a reload
 * later keeps the old certificate); TLS files with an http PUBLIC_URL (or ADMIN_TLS_* without an
 * https ADMIN_URL); HTTP_PORT without an https PUBLIC_URL; an HSTS value that is not a
 * `max-age` directive, `0` or `off`; ACME_EMAIL that is no address or with an http PUBLIC_URL, an
 * ACME_DIRECTORY_URL that is no https URL, an ACME_CA_FILE that cannot be read or without ACME_EMAIL.
 */
export function readTlsSettings(vars: TlsVariables, problems: string[]): TlsSettings {
  const publicPair = readPair(vars, 'TLS_CERT_FILE', 'TLS_KEY_FILE', problems);
  const adminPair = readPair(vars, 'ADMIN_TLS_CERT_FILE', 'ADMIN_TLS_KEY_FILE', problems);
  const directory = vars.TLS_CERTS_DIR;
  if (directory !== undefined) checkDirectory(directory, problems);
  const acme = readAcme(vars, problems);
  const publicTls = publicPair || directory !== undefined || acme !== undefined;
  if ((publicPair || directory !== undefined) && vars.PUBLIC_URL.protocol !== 'https:') {
    problems.push(`PUBLIC_URL, ${publicPair ? 'TLS_CERT_FILE' : 'TLS_CERTS_DIR'}: PORT speaks HTTPS with TLS files, so PUBLIC_URL must be an https:// URL`);
  } else if (acme !== undefined && vars.PUBLIC_URL.protocol !== 'https:') {
    problems.push('PUBLIC_URL, ACME_EMAIL: PORT speaks HTTPS with certificates by ACME, so PUBLIC_URL must be an https:// URL');
  }
  const adminHttps = vars.ADMIN_URL?.protocol === 'https:';
  if (adminPair && !adminHttps) problems.push('ADMIN_URL, ADMIN_TLS_CERT_FILE: ADMIN_TLS_* make ADMIN_PORT speak HTTPS, so ADMIN_URL must be an https:// URL');
  if (vars.HTTP_PORT !== undefined && vars.PUBLIC_URL.protocol !== 'https:') {
    problems.push('HTTP_PORT: redirects to https, so PUBLIC_URL must be an https:// URL');
  }
  const pair = (which: boolean, cert: 'TLS_CERT_FILE' | 'ADMIN_TLS_CERT_FILE', key: 'TLS_KEY_FILE' | 'ADMIN_TLS_KEY_FILE') =>
    which ? { certFile: vars[cert]!, keyFile: vars[key]!, variables: `${cert}, ${key}` } : undefined;
  const publicCertificates = publicTls ? { defaultPair: pair(publicPair, 'TLS_CERT_FILE', 'TLS_KEY_FILE'), directory, acme: acme !== undefined } : undefined;
  // The admin listener terminates TLS when its origin is https and the gateway terminates TLS at
  // all; without its own pair it serves the public listener's (a certificate naming both hosts).
  const adminCertificates = adminHttps && (adminPair || publicTls)
    ? { defaultPair: pair(adminPair, 'ADMIN_TLS_CERT_FILE', 'ADMIN_TLS_KEY_FILE') ?? publicCertificates!.defaultPair, directory, acme: acme !== undefined }
    : undefined;
  return { public: publicCertificates, admin: adminCertificates, httpPort: vars.HTTP_PORT, hsts: readHsts(vars.HSTS, problems), acme };
}

/** Whether the pair `cert` + `key` is set (both, each readable); neither set: false. */
function readPair(vars: TlsVariables, cert: 'TLS_CERT_FILE' | 'ADMIN_TLS_CERT_FILE', key: 'TLS_KEY_FILE' | 'ADMIN_TLS_KEY_FILE', problems: string[]): boolean {
  if (vars[cert] === undefined && vars[key] === undefined) return false;
  if (vars[cert] === undefined || vars[key] === undefined) {
    problems.push(`${cert}, ${key}: set both, the certificate (PEM, with its chain) and its key`);
    return false;
  }
  for (const name of [cert, key]) {
    try {
      readFileSync(vars[name]!);
    } catch (error) {
      problems.push(`${name}: cannot read ${vars[name]} (${errorCode(error) ?? 'error'})`);
    }
  }
  return true;
}

function checkDirectory(directory: string, problems: string[]): void {
  try {
    readdirSync(directory);
  } catch (error) {
    problems.push(`TLS_CERTS_DIR: cannot read the directory ${directory} (${errorCode(error) ?? 'error'})`);
  }
}

/** An address for ACME_EMAIL: one `@`, something on each side, no spaces or `<>`. */
const EMAIL = /^[^\s@<>]+@[^\s@<>]+$/;

/** The ACME settings when ACME_EMAIL is set (undefined otherwise); problems pushed as for the files. */
function readAcme(vars: TlsVariables, problems: string[]): AcmeSettings | undefined {
  const caFile = vars.ACME_CA_FILE;
  if (caFile !== undefined) {
    try {
      readFileSync(caFile);
    } catch (error) {
      problems.push(`ACME_CA_FILE: cannot read ${caFile} (${errorCode(error) ?? 'error'})`);
    }
  }
  if (vars.ACME_EMAIL === undefined) {
    if (caFile !== undefined) problems.push('ACME_CA_FILE: trusts an ACME server, so it needs ACME_EMAIL, which turns ACME on');
    return undefined;
  }
  if (!EMAIL.test(vars.ACME_EMAIL)) problems.push('ACME_EMAIL: must be an email address (the ACME account\'s contact)');
  let directoryUrl: URL | undefined;
  try {
    directoryUrl = new URL(vars.ACME_DIRECTORY_URL);
  } catch {
    // reported below
  }
  // RFC 8555 §6.1: ACME is spoken over HTTPS only.
  if (directoryUrl?.protocol !== 'https:') problems.push('ACME_DIRECTORY_URL: must be an https:// URL (an ACME directory)');
  return { email: vars.ACME_EMAIL, directoryUrl: directoryUrl ?? new URL('https://invalid'), caFile };
}

/** HSTS's header value, undefined for `0` or `off` (not sent). */
function readHsts(value: string, problems: string[]): string | undefined {
  if (value === '0' || value.toLowerCase() === 'off') return undefined;
  if (!HSTS_VALUE.test(value)) problems.push('HSTS: must be max-age=<seconds> (with ; includeSubDomains or ; preload), or 0 or off');
  return value;
}
