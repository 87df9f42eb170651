/**
 * design.md §4.9 in the embedded gateway: the shared checks (registry-api-checks.ts) on the admin
 * port, with the public port's data plane routing by what is applied.
 */
import { describe } from 'node:test';
import { startTestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { checkRegistryApi } from './registry-api-checks.js';

describe('the declarative registry and conditional writes in the embedded gateway', () => {
  checkRegistryApi(async () => {
    const gw = await startTestGateway();
    const { db } = gw.gateway;
    return {
      adminUrl: gw.adminUrl,
      proxyUrls: [gw.origin],
      signIn: () => signIn(gw),
      dump: () => JSON.stringify([db.prepare('SELECT * FROM services ORDER BY id').all(), db.prepare('SELECT * FROM audit_logs ORDER BY id').all()]),
      close: () => gw.close(),
    };
  });
});
