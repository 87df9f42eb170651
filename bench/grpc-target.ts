/**
 * `node dist/bench/grpc-target.js`: the gRPC rows' target in its own process, the grpc-js Echo
 * service of test/support/grpc-service.ts over cleartext HTTP/2 (h2c) on a free port of
 * 127.0.0.1. Writes its url (`h2c://127.0.0.1:PORT`) to the file `URL_FILE`, then prints
 * `{"ready":true}`; stops on SIGTERM.
 */
import { writeFileSync } from 'node:fs';
import { startGrpcTarget } from '../test/support/grpc-service.js';

const urlFile = process.env.URL_FILE;
if (!urlFile) throw new Error('URL_FILE must name the file the target writes its url to');
const target = await startGrpcTarget();
writeFileSync(urlFile, target.url);
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
process.once('SIGTERM', () => void target.close().then(() => process.exit(0)));
