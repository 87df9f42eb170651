/** The bearer token's pieces that need no identity provider: reading the field, and the cache of verified tokens. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bearerCredentials } from '../../proxy/auth/bearer-token.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import type { SessionUser } from '../../shared/types.js';

describe('bearerCredentials', () => {
  it('reads the Bearer scheme in any case, with spaces or a tab before the token (RFC 6750 §2.1)', () => {
    assert.equal(bearerCredentials('Bearer abc.def.ghi'), 'abc.def.ghi');
    assert.equal(bearerCredentials('bEARER   abc'), 'abc');
    assert.equal(bearerCredentials('Bearer\tabc'), 'abc');
    assert.equal(bearerCredentials('Bearer'), '');
    assert.equal(bearerCredentials('Bearer a, Bearer b'), 'a, Bearer b', 'two fields joined: no single token');
  });

  it('is undefined for other schemes, and for a scheme that only starts like Bearer', () => {
    for (const value of ['Basic dXNlcjpwYXNz', 'Digest username="x"', 'Bearerabc', 'Token abc', '']) {
      assert.equal(bearerCredentials(value), undefined, value);
    }
  });
});

describe('ExpiringCache (verified bearer tokens)', () => {
  const user = (sub: string): SessionUser => ({ sub, name: sub, email: '', isAdmin: false, groups: [] });

  it('serves an entry until its exp, then drops it', () => {
    const cache = new ExpiringCache<SessionUser>(10);
    cache.set('a', user('a'), 2_000);
    assert.equal(cache.get('a', 1_999)?.sub, 'a');
    assert.equal(cache.get('a', 2_000), undefined);
    assert.equal(cache.size, 0);
  });

  it('keeps at most maxEntries, dropping the one stored longest ago', () => {
    const cache = new ExpiringCache<SessionUser>(2);
    cache.set('a', user('a'), 9_000);
    cache.set('b', user('b'), 9_000);
    cache.set('a', user('a'), 9_000); // stored again: now the newest
    cache.set('c', user('c'), 9_000);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('b', 0), undefined);
    assert.deepEqual([cache.get('a', 0)?.sub, cache.get('c', 0)?.sub], ['a', 'c']);
  });
});
