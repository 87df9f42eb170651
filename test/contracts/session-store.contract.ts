/**
 * The SessionStore contract (shared/backends/session-store.ts), run against every implementation
 * (oauth2-proxy's shared session-store suite, STYLE.md). Not a test file: *.test.ts call it.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { isWellFormedSecret, newSessionId } from '../../shared/secrets.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import { eventually } from '../support/eventually.js';
import { SUITE } from '../support/redis.js';
import { sampleSession } from '../support/samples.js';

/** A fresh, empty store, and how to dispose of it. */
export interface SessionStoreFixture {
  store: SessionStore;
  close(): Promise<void>;
}

export function sessionStoreContract(name: string, factory: () => Promise<SessionStoreFixture>): void {
  describe(`SessionStore contract: ${name}`, SUITE, () => {
    let fixture: SessionStoreFixture;
    let store: SessionStore;
    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
    });
    afterEach(async () => {
      await fixture.close();
    });

    it('create returns a new well-formed id (256 bits, base64url) under which get finds the session', async () => {
      const session = sampleSession();
      const id = await store.create(session);
      assert.ok(isWellFormedSecret(id), id);
      assert.deepEqual(await store.get(id), session);
    });

    it("keeps the user's groups (design.md §4.7), the data plane's access policies read them", async () => {
      const session = sampleSession({ user: { sub: 'sub-groups', name: 'G', email: 'g@example.com', isAdmin: false, groups: ['ops', 'Team Blue'] } });
      const id = await store.create(session);
      assert.deepEqual((await store.get(id))?.user.groups, ['ops', 'Team Blue']);
    });

    it('every create returns a different id, each with its own session', async () => {
      const [a, b] = [sampleSession(), sampleSession()];
      const [idA, idB] = [await store.create(a), await store.create(b)];
      assert.notEqual(idA, idB);
      assert.deepEqual(await store.get(idA), a);
      assert.deepEqual(await store.get(idB), b);
    });

    it('get of an unknown or malformed id is null', async () => {
      assert.equal(await store.get(newSessionId()), null);
      for (const bad of ['', 'short', `${newSessionId()}x`, `${newSessionId().slice(0, 42)}*`]) {
        assert.equal(await store.get(bad), null, JSON.stringify(bad));
      }
    });

    it('destroy makes get null; destroying twice, an unknown or a malformed id is harmless', async () => {
      const kept = await store.create(sampleSession());
      const id = await store.create(sampleSession());
      await store.get(id);
      await store.destroy(id);
      assert.equal(await store.get(id), null);
      await store.destroy(id);
      await store.destroy(newSessionId());
      await store.destroy('not-an-id');
      assert.notEqual(await store.get(kept), null, 'other sessions stay');
    });

    it('a session created already expired reads as null', async () => {
      const id = await store.create(sampleSession({ expiresAt: Date.now() - 1 }));
      assert.ok(isWellFormedSecret(id));
      assert.equal(await store.get(id), null);
    });

    it('a session reads as null once its expiresAt passes, even right after a read', async () => {
      const id = await store.create(sampleSession({ expiresAt: Date.now() + 300 }));
      assert.notEqual(await store.get(id), null);
      await eventually('the session to expire', async () => (await store.get(id)) === null, 3_000);
    });

    it('close resolves', async () => {
      await store.create(sampleSession());
      await store.close();
    });
  });
}
