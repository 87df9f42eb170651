/**
 * Debian's `pebble`, Let's Encrypt's ACME test server, for the tests of certificates by ACME, with
 * validation on (never PEBBLE_VA_ALWAYS_VALID): it validates HTTP-01 on `httpPort` and TLS-ALPN-01
 * on `tlsPort` of 127.0.0.1, which every name resolves to through `pebble-challtestsrv`'s DNS
 * (`-defaultIPv4 127.0.0.1`, no AAAA), given to pebble as `-dnsserver`. Pebble's own listener has
 * a certificate of a test CA (`caFile`, for ACME_CA_FILE); the certificates it issues chain to
 * roots it makes at each start ({@link Pebble.roots}). Not a test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { eventually } from './eventually.js';
import { freePort } from './free-port.js';
import { makeTestCa } from './test-certificates.js';

const PEBBLE = '/usr/bin/pebble';
const CHALLTESTSRV = '/usr/bin/pebble-challtestsrv';

/** Why the ACME tests cannot run here (undefined: they can): for `test(..., { skip })`. */
export const pebbleMissing: string | undefined = existsSync(PEBBLE) && existsSync(CHALLTESTSRV) ? undefined : `${PEBBLE} and ${CHALLTESTSRV} are needed (apt-get install pebble)`;

export interface PebbleOptions {
  /** Where pebble validates HTTP-01 (the gateway's HTTP_PORT). */
  httpPort: number;
  /** Where pebble validates TLS-ALPN-01 (the gateway's PORT). */
  tlsPort: number;
  /** The lifetime of the certificates it issues, in seconds (pebble's `certificateValidityPeriod`; default 1 hour). */
  validitySeconds?: number;
}

export interface Pebble {
  /** ACME_DIRECTORY_URL. */
  readonly directoryUrl: string;
  /** ACME_CA_FILE: the CA of pebble's own listener. */
  readonly caFile: string;
  /** The root (PEM) the certificates issued since its last start chain to (its management port's `/roots/0`). */
  roots(): Promise<string>;
  /** Stops pebble (a CA outage); the DNS stays up. */
  stop(): Promise<void>;
  /** Starts pebble again on the same ports (with new roots, and no memory of accounts). */
  start(): Promise<void>;
  /** What pebble printed (for failure messages). */
  output(): string;
  /** Stops pebble and the DNS and removes the folder. */
  close(): Promise<void>;
}

/** Starts the DNS and pebble on free ports; resolves once pebble's directory answers. */
export async function startPebble(options: PebbleOptions): Promise<Pebble> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-pebble-'));
  const ca = makeTestCa(dir, 'pebble-listener-ca');
  const listener = ca.issue('pebble', ['localhost', '127.0.0.1'], 'pem');
  const [acmePort, managementPort, dnsPort, dnsManagementPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const config = join(dir, 'pebble-config.json');
  writeFileSync(config, JSON.stringify({
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: listener.cert,
      privateKey: listener.key,
      httpPort: options.httpPort,
      tlsPort: options.tlsPort,
      ocspResponderURL: '',
      externalAccountBindingRequired: false,
      certificateValidityPeriod: options.validitySeconds ?? 3600,
    },
  }));
  const dns = track(spawn(CHALLTESTSRV, [
    '-dns01', `127.0.0.1:${dnsPort}`, '-defaultIPv4', '127.0.0.1', '-defaultIPv6', '',
    '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${dnsManagementPort}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const trusting = new Agent({ connect: { ca: readFileSync(ca.caFile) } });
  const directoryUrl = `https://127.0.0.1:${acmePort}/dir`;
  let pebble: Tracked | undefined;
  const start = async () => {
    // Every order is validated (no authorization reuse) and no good nonce is refused: a test then
    // sees each challenge answered, and acme-client's own nonce retry is not what is tested.
    const env = { ...process.env, PEBBLE_VA_NOSLEEP: '1', PEBBLE_AUTHZREUSE: '0', PEBBLE_WFE_NONCEREJECT: '0' };
    pebble = track(spawn(PEBBLE, ['-config', config, '-dnsserver', `127.0.0.1:${dnsPort}`], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    await eventually(`pebble to answer at ${directoryUrl}\n${pebble.output()}`, async () => {
      const response = await request(directoryUrl, { dispatcher: trusting });
      await response.body.dump();
      return response.statusCode === 200;
    }, 20_000);
  };
  await start();
  return {
    directoryUrl,
    caFile: ca.caFile,
    async roots() {
      const response = await request(`https://127.0.0.1:${managementPort}/roots/0`, { dispatcher: trusting });
      return response.body.text();
    },
    stop: () => pebble!.stop(),
    start,
    output: () => `${pebble?.output() ?? ''}${dns.output()}`,
    async close() {
      await pebble?.stop();
      await dns.stop();
      await trusting.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Tracked {
  output(): string;
  stop(): Promise<void>;
}

/** A child whose output is kept and that `stop` ends (SIGTERM, resolved at its exit). */
function track(child: ChildProcess): Tracked {
  let output = '';
  child.stdout?.on('data', (chunk) => (output += String(chunk)));
  child.stderr?.on('data', (chunk) => (output += String(chunk)));
  const exited = once(child, 'exit');
  return {
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
