/**
 * The TLS row's certificate: one self-signed P-256 certificate for 127.0.0.1 and localhost (two
 * days), made with `openssl` in the bench's work dir, and served by both the gateway and Caddy.
 * Self-signed, so the certificate is its own CA: a client that verifies trusts `certFile`.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** PEM files of the certificate and its key. */
export interface BenchCertificate {
  certFile: string;
  keyFile: string;
}

/** Makes `bench-tls.crt` + `bench-tls.key` in `dir`; `{ reason }` when openssl is missing or fails. */
export function makeBenchCertificate(dir: string): BenchCertificate | { reason: string } {
  const certFile = join(dir, 'bench-tls.crt');
  const keyFile = join(dir, 'bench-tls.key');
  const run = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ], { encoding: 'utf8' });
  if (run.error) return { reason: `openssl not available: ${run.error.message}` };
  if (run.status !== 0) return { reason: `openssl req failed: ${run.stderr.trim().split('\n')[0]}` };
  return { certFile, keyFile };
}
