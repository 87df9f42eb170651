/**
 * Certificates for tests, made with `openssl` in a folder: a CA ({@link makeTestCa}) that issues
 * leaf certificates for DNS names and IP addresses (P-256 keys, two days), and the CA, server and
 * client set a TLS Redis needs ({@link makeTestCertificates}).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

/** A leaf's PEM files. */
export interface LeafFiles {
  cert: string;
  key: string;
}

export interface TestCa {
  /** The CA's certificate (PEM file), for clients to trust. */
  readonly caFile: string;
  /**
   * Issues a certificate whose subjectAltName names each of `names` (DNS names, `*.` wildcards
   * or IP addresses) and whose CN is the first, into `<fileBase>.crt`/`<fileBase>.key` (or
   * `.pem`/`.key` with `extension`).
   */
  issue(fileBase: string, names: readonly string[], extension?: string): LeafFiles;
}

/** A CA in `dir` (`ca.pem`, `ca.key`). */
export function makeTestCa(dir: string, label = 'gatehouse-test-ca'): TestCa {
  const file = (name: string) => join(dir, name);
  openssl('req', '-x509', ...NEW_KEY, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', `/CN=${label}`);
  return {
    caFile: file('ca.pem'),
    issue(fileBase, names, extension = 'crt') {
      const base = join(dir, fileBase);
      writeFileSync(`${base}.ext`, `subjectAltName=${names.map((name) => (isIP(name) ? `IP:${name}` : `DNS:${name}`)).join(',')}\n`);
      openssl('req', ...NEW_KEY, '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${names[0] ?? fileBase}`);
      const ext = names.length > 0 ? ['-extfile', `${base}.ext`] : [];
      openssl('x509', '-req', '-in', `${base}.csr`, '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', `${base}.${extension}`, '-days', '2', ...ext);
      return { cert: `${base}.${extension}`, key: `${base}.key` };
    },
  };
}

/** PEM files made by {@link makeTestCertificates}. */
export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/**
 * Makes, in `dir`, a CA, a server certificate whose subjectAltName names every one of
 * `addresses` (IP addresses; default 127.0.0.1), and a client certificate (`CN=gatehouse`), all
 * signed by the CA.
 */
export function makeTestCertificates(dir: string, addresses: readonly string[] = ['127.0.0.1']): TestCertificates {
  const ca = makeTestCa(dir);
  const server = ca.issue('server', addresses, 'pem');
  const client = ca.issue('client', ['gatehouse'], 'pem');
  return { ca: ca.caFile, serverCert: server.cert, serverKey: server.key, clientCert: client.cert, clientKey: client.key };
}

const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function openssl(...args: string[]): void {
  const run = spawnSync('openssl', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr}`);
}
