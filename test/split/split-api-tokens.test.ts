/**
 * design.md §4.8 in split mode: admin API tokens on the admin process's ADMIN_PORT, and through a
 * proxy process that hands the admin API over to it (ADMIN_URL unset, so the public origin
 * serves the API too).
 */
import { describe } from 'node:test';
import { openDatabase } from '../../admin/database.js';
import { checkApiTokens, expireToken } from '../admin/api-token-checks.js';
import { startSplitGateway } from '../support/split-gateway.js';

describe('admin API tokens in split mode (admin process, proxy processes, Redis)', () => {
  checkApiTokens(async () => {
    const split = await startSplitGateway();
    const db = openDatabase(split.databasePath);
    return {
      apiUrls: [split.adminUrl, split.proxies[0].url],
      signIn: (user) => split.signIn(user),
      expire: (tokenId) => expireToken(db, tokenId),
      async close() {
        db.close();
        await split.close();
      },
    };
  });
});
