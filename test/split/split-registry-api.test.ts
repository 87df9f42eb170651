/**
 * design.md §4.9 in split mode: the admin process applies a registry document and both proxy
 * processes route by it (through Redis); conditional writes on the admin process's API.
 */
import { describe } from 'node:test';
import { openDatabase } from '../../admin/database.js';
import { checkRegistryApi } from '../admin/registry-api-checks.js';
import { startSplitGateway } from '../support/split-gateway.js';

describe('the declarative registry and conditional writes in split mode (admin process, proxy processes, Redis)', () => {
  checkRegistryApi(async () => {
    const split = await startSplitGateway();
    const db = openDatabase(split.databasePath);
    return {
      adminUrl: split.adminUrl,
      proxyUrls: split.proxies.map((proxy) => proxy.url),
      signIn: () => split.signIn(),
      dump: () => JSON.stringify([db.prepare('SELECT * FROM services ORDER BY id').all(), db.prepare('SELECT * FROM audit_logs ORDER BY id').all()]),
      async close() {
        db.close();
        await split.close();
      },
    };
  });
});
