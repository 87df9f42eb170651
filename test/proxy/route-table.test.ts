import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RouteTable } from '../../proxy/routing/route-table.js';
import { routingKey } from '../../shared/routing/routing-key.js';
import { service } from '../support/samples.js';

describe('RouteTable: legacy paths that differ only in case', () => {
  const open = service({ path: '/Secret', targetUrl: 'http://127.0.0.1:1/open' });
  const signIn = service({ path: '/secret', targetUrl: 'http://127.0.0.1:1/protected', requireAuth: true });

  it('keeps the service that requires sign-in, whatever the snapshot order', () => {
    for (const services of [[open, signIn], [signIn, open]]) {
      const table = new RouteTable(services);
      for (const path of ['/secret/x', '/SECRET/x', '/Secret']) {
        assert.equal(table.lookup(routingKey(path))?.service.id, signIn.id, path);
      }
    }
  });

  it('between two of the same protection, keeps the same one whatever the order', () => {
    const other = { ...open, id: crypto.randomUUID(), path: '/SECRET' };
    const first = new RouteTable([open, other]).lookup('/secret')?.service.id;
    const second = new RouteTable([other, open]).lookup('/secret')?.service.id;
    assert.equal(first, other.id, '`/SECRET` sorts before `/Secret`');
    assert.equal(second, first);
  });
});
