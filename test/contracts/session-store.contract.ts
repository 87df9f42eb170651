/**
 * The SessionStore contract (shared/backends/session-store.ts), run against every implementation
 * (oauth2-proxy's shared session-store suite, STYLE.md). Not a test file: *.test.ts call it.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { isWellFormedSecret, newSessionHandle, newSessionId } from '../../shared/identity/secrets.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { Session } from '../../shared/types.js';
import { eventually } from '../support/eventually.js';
import { Recorder } from '../support/recorder.js';
import { SUITE } from '../support/redis.js';
import { sampleSession } from '../support/samples.js';

/** A fresh, empty store, and how to dispose of it. */
export interface SessionStoreFixture {
  store: SessionStore;
  /**
   * Resolves once every listener registered on the store so far can hear requests made from now on
   * (a pub/sub SUBSCRIBE confirmed); absent when registering is immediate.
   */
  listening?(): Promise<void>;
  /**
   * Opens another store, with the same options, over the same storage, as the next process would
   * (after a restart or a deploy); `close` disposes of it too.
   */
  reopen(): Promise<SessionStore>;
  close(): Promise<void>;
}

/** What a test may ask of a store beyond the defaults. */
export interface SessionStoreOptions {
  /** SESSION_IDLE_TIMEOUT in ms. */
  idleTimeoutMs?: number;
}

const HOUR = 3_600_000;
const handlesOf = (sessions: readonly Session[]) => sessions.map((s) => s.handle);
const sortedHandles = (sessions: readonly Session[]) => handlesOf(sessions).sort();

export function sessionStoreContract(name: string, factory: (options?: SessionStoreOptions) => Promise<SessionStoreFixture>): void {
  describe(`SessionStore contract: ${name}`, SUITE, () => {
    let fixture: SessionStoreFixture;
    let store: SessionStore;
    /** Stores a test opened on top of `fixture` (with other options). */
    let extra: SessionStoreFixture[];
    const open = async (options: SessionStoreOptions): Promise<SessionStore> => {
      const opened = await factory(options);
      extra.push(opened);
      return opened.store;
    };
    beforeEach(async () => {
      extra = [];
      fixture = await factory();
      store = fixture.store;
    });
    afterEach(async () => {
      for (const opened of extra.reverse()) await opened.close();
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

    describe('list', () => {
      it('pages through live sessions newest first, with the total of every match (expired ones neither listed nor counted)', async () => {
        const t = Date.now();
        const sessions = [0, 1, 2, 3, 4].map((i) => {
          const createdAt = t - (5 - i) * 60_000;
          return sampleSession({ createdAt, expiresAt: createdAt + HOUR });
        });
        for (const i of [2, 0, 4, 1, 3]) await store.create(sessions[i]!);
        await store.create(sampleSession({ createdAt: t - 2 * HOUR, expiresAt: t - 1 }));
        const [s0, s1, s2, s3, s4] = sessions as [Session, Session, Session, Session, Session];

        const first = await store.list({ limit: 2, offset: 0 });
        assert.equal(first.total, 5);
        assert.deepEqual(first.sessions, [s4, s3], 'whole sessions, newest first');
        const second = await store.list({ limit: 2, offset: 2 });
        assert.deepEqual({ handles: handlesOf(second.sessions), total: second.total }, { handles: [s2.handle, s1.handle], total: 5 });
        const last = await store.list({ limit: 2, offset: 4 });
        assert.deepEqual({ handles: handlesOf(last.sessions), total: last.total }, { handles: [s0.handle], total: 5 });
        const beyond = await store.list({ limit: 2, offset: 5 });
        assert.deepEqual({ handles: handlesOf(beyond.sessions), total: beyond.total }, { handles: [], total: 5 });
        assert.deepEqual(handlesOf((await store.list({ limit: 100, offset: 0 })).sessions), [s4, s3, s2, s1, s0].map((s) => s.handle));
      });

      it("a user's sessions: by subject (exactly) or by verified email (any case), never another user's or an email-less one by ''", async () => {
        const t = Date.now();
        const at = (minutesAgo: number) => ({ createdAt: t - minutesAgo * 60_000, expiresAt: t - minutesAgo * 60_000 + HOUR });
        const grace = sampleSession().user;
        const g1 = sampleSession({ ...at(3), user: { ...grace, email: 'Grace@Example.com' } });
        const g2 = sampleSession({ ...at(2), user: { ...grace, email: 'Grace@Example.com' } });
        // Another account at the provider with the same verified email: the same person for the admin.
        const g3 = sampleSession({ ...at(1), user: { ...sampleSession().user, email: 'grace@example.com' } });
        const ada = sampleSession({ ...at(4), user: { ...sampleSession().user, name: 'Ada', email: 'ada@example.com' } });
        const anonymousEmail = sampleSession({ ...at(5), user: { ...sampleSession().user, name: 'No Mail', email: '' } });
        for (const session of [g1, g2, g3, ada, anonymousEmail]) await store.create(session);

        const page = async (user: string, limit = 100, offset = 0) => {
          const { sessions, total } = await store.list({ user, limit, offset });
          return { handles: handlesOf(sessions), total };
        };
        assert.deepEqual(await page(grace.sub), { handles: [g2.handle, g1.handle], total: 2 });
        assert.deepEqual(await page('GRACE@example.COM'), { handles: [g3.handle, g2.handle, g1.handle], total: 3 });
        assert.deepEqual(await page('grace@example.com', 2, 0), { handles: [g3.handle, g2.handle], total: 3 });
        assert.deepEqual(await page('grace@example.com', 2, 2), { handles: [g1.handle], total: 3 });
        assert.deepEqual((await store.list({ user: 'grace@example.com', limit: 1, offset: 0 })).sessions, [g3], 'whole sessions');
        assert.deepEqual(await page('ada@example.com'), { handles: [ada.handle], total: 1 });
        assert.deepEqual(await page(anonymousEmail.user.sub), { handles: [anonymousEmail.handle], total: 1 }, 'an email-less session by its subject');
        assert.deepEqual(await page(''), { handles: [], total: 0 }, "'' is nobody's email");
        assert.deepEqual(await page(grace.sub.toUpperCase()), { handles: [], total: 0 }, 'subjects are matched exactly');
        assert.deepEqual(await page('nobody@example.com'), { handles: [], total: 0 });
        assert.equal((await store.list({ limit: 100, offset: 0 })).total, 5);
      });
    });

    it("find: every live session of a subject, or of a provider session (sid), and no one else's", async () => {
      const user = sampleSession().user;
      const a = sampleSession({ user: { ...user }, sid: 'sid-1' });
      const b = sampleSession({ user: { ...user }, sid: 'sid-2' });
      const c = sampleSession({ user: { ...user }, sid: 'sid-1', scope: 'admin' });
      const e = sampleSession({ user: { ...user } });
      const other = sampleSession({ sid: 'sid-3' });
      const expired = sampleSession({ user: { ...user }, sid: 'sid-1', expiresAt: Date.now() - 1 });
      for (const session of [a, b, c, e, other, expired]) await store.create(session);

      assert.deepEqual(sortedHandles(await store.find({ sub: user.sub })), sortedHandles([a, b, c, e]));
      assert.deepEqual(sortedHandles(await store.find({ sid: 'sid-1' })), sortedHandles([a, c]));
      assert.deepEqual(await store.find({ sid: 'sid-3' }), [other], 'whole sessions');
      assert.deepEqual(await store.find({ sub: other.user.sub }), [other]);
      assert.deepEqual(await store.find({ sub: 'sub-unknown' }), []);
      assert.deepEqual(await store.find({ sid: 'sid-unknown' }), []);
    });

    describe('revoke', () => {
      it('ends the sessions with these handles at once (get, byHandle, list, find) and returns how many were live', async () => {
        const user = sampleSession().user;
        const a = sampleSession({ user: { ...user }, sid: 'sid-a' });
        const b = sampleSession({ sid: 'sid-b' });
        const kept = sampleSession({ user: { ...user }, sid: 'sid-a' });
        const [idA, idB, idKept] = [await store.create(a), await store.create(b), await store.create(kept)];
        for (const id of [idA, idB, idKept]) assert.notEqual(await store.get(id), null); // now cached

        const live = await store.revoke([a.handle, b.handle, newSessionHandle(), 'not a handle', '', a.handle]);
        assert.equal(live, 2, 'unknown, malformed and repeated handles count nothing');
        for (const [id, session] of [[idA, a], [idB, b]] as const) {
          assert.equal(await store.get(id), null, 'not served from a cache');
          assert.equal(await store.get(id, { fresh: true }), null);
          assert.equal(await store.byHandle(session.handle), null);
        }
        const listed = await store.list({ limit: 100, offset: 0 });
        assert.deepEqual({ handles: handlesOf(listed.sessions), total: listed.total }, { handles: [kept.handle], total: 1 });
        assert.deepEqual(handlesOf((await store.list({ user: user.sub, limit: 100, offset: 0 })).sessions), [kept.handle]);
        assert.deepEqual(handlesOf(await store.find({ sub: user.sub })), [kept.handle]);
        assert.deepEqual(handlesOf(await store.find({ sid: 'sid-a' })), [kept.handle]);
        assert.deepEqual(await store.find({ sid: 'sid-b' }), []);

        assert.deepEqual(await store.get(idKept), kept, 'other sessions are unaffected');
        assert.deepEqual(await store.byHandle(kept.handle), kept);
        assert.equal(await store.revoke([a.handle]), 0, 'revoking again counts nothing');
        assert.equal(await store.revoke([]), 0);
        assert.notEqual(await store.get(idKept, { fresh: true }), null);
      });

      it('a session ended by destroy (logout) is no longer listed or found, and revoking it counts nothing', async () => {
        const session = sampleSession({ sid: 'sid-logout' });
        const id = await store.create(session);
        await store.destroy(id);
        assert.equal(await store.byHandle(session.handle), null);
        assert.equal((await store.list({ limit: 100, offset: 0 })).total, 0);
        assert.deepEqual(await store.find({ sid: 'sid-logout' }), []);
        assert.equal(await store.revoke([session.handle]), 0);
      });
    });

    describe('update', () => {
      it('changes user, groups, refresh token, check time; keeps handle, sub, sid, creation, expiry, last use; reads see it at once', async () => {
        const t = Date.now();
        const session = sampleSession({ sid: 'sid-update', refreshToken: 'sealed-1', checkedAt: t - 60_000, lastSeenAt: t - 1_000 });
        const id = await store.create(session);
        assert.deepEqual(await store.get(id), session); // now cached
        const otherHandle = newSessionHandle();
        let seen: Session | undefined;
        const updated = await store.update(session.handle, (current) => {
          seen = current;
          return {
            ...current,
            handle: otherHandle,
            sid: 'sid-other',
            createdAt: 1,
            expiresAt: current.expiresAt + 10 * HOUR,
            lastSeenAt: t + 60_000,
            user: { sub: 'sub-someone-else', name: 'Grace B. Hopper', email: 'Grace.Hopper@Example.org', isAdmin: true, groups: ['ops', 'navy'] },
            refreshToken: 'sealed-2',
            checkedAt: t,
            providerDownSince: t - 5_000,
          };
        });
        assert.equal(updated, true);
        assert.deepEqual(seen, session, 'change is given the current session');
        const expected: Session = {
          ...session,
          user: { sub: session.user.sub, name: 'Grace B. Hopper', email: 'Grace.Hopper@Example.org', isAdmin: true, groups: ['ops', 'navy'] },
          refreshToken: 'sealed-2',
          checkedAt: t,
          providerDownSince: t - 5_000,
        };
        assert.deepEqual(await store.get(id), expected, 'the cached copy was evicted');
        assert.deepEqual(await store.get(id, { fresh: true }), expected);
        assert.deepEqual(await store.byHandle(session.handle), expected);
        assert.equal(await store.byHandle(otherHandle), null, 'the handle cannot change');
        assert.deepEqual((await store.list({ limit: 100, offset: 0 })).sessions, [expected]);
        assert.deepEqual(handlesOf(await store.find({ sub: session.user.sub })), [session.handle]);
        assert.deepEqual(await store.find({ sub: 'sub-someone-else' }), [], 'cannot move to another subject');
        assert.deepEqual(handlesOf(await store.find({ sid: 'sid-update' })), [session.handle]);
        assert.deepEqual(await store.find({ sid: 'sid-other' }), []);
        const byNewEmail = await store.list({ user: 'grace.hopper@example.ORG', limit: 100, offset: 0 });
        assert.deepEqual(handlesOf(byNewEmail.sessions), [session.handle], 'found by its new email');
        assert.equal((await store.list({ user: 'grace@example.com', limit: 100, offset: 0 })).total, 0, 'no longer by its old one');

        assert.equal(await store.update(session.handle, (current) => ({ ...current, providerDownSince: undefined, refreshToken: undefined })), true);
        const cleared = await store.get(id);
        assert.equal(cleared?.providerDownSince, undefined);
        assert.equal(cleared?.refreshToken, undefined);
        assert.equal(cleared?.checkedAt, t);
      });

      it('returns false for a revoked, logged-out, unknown or malformed handle, and never brings a session back', async () => {
        const revoked = sampleSession();
        const revokedId = await store.create(revoked);
        await store.get(revokedId);
        assert.equal(await store.revoke([revoked.handle]), 1);
        const rename = (current: Session): Session => ({ ...current, user: { ...current.user, name: 'Back again' } });
        assert.equal(await store.update(revoked.handle, rename), false);
        assert.equal(await store.get(revokedId), null);
        assert.equal(await store.get(revokedId, { fresh: true }), null);
        assert.equal(await store.byHandle(revoked.handle), null);

        const loggedOut = sampleSession();
        const loggedOutId = await store.create(loggedOut);
        await store.destroy(loggedOutId);
        assert.equal(await store.update(loggedOut.handle, rename), false);
        assert.equal(await store.get(loggedOutId, { fresh: true }), null);

        assert.equal(await store.update(newSessionHandle(), rename), false);
        assert.equal(await store.update('not a handle', rename), false);
        assert.equal((await store.list({ limit: 100, offset: 0 })).total, 0, 'nothing was written');
      });
    });

    describe('touch', () => {
      it('raises lastSeenAt as get, get fresh, byHandle, list and find see it, and never lowers it', async () => {
        const t = Date.now();
        const session = sampleSession({ createdAt: t - 120_000, lastSeenAt: t - 60_000 });
        const id = await store.create(session);
        assert.equal((await store.get(id))?.lastSeenAt, t - 60_000); // now cached
        const lastSeen = async () => [
          (await store.get(id))?.lastSeenAt,
          (await store.get(id, { fresh: true }))?.lastSeenAt,
          (await store.byHandle(session.handle))?.lastSeenAt,
          (await store.list({ limit: 10, offset: 0 })).sessions[0]?.lastSeenAt,
          (await store.find({ sub: session.user.sub }))[0]?.lastSeenAt,
        ];
        await store.touch(id, t);
        assert.deepEqual(await lastSeen(), [t, t, t, t, t]);
        await store.touch(id, t - 30_000);
        assert.deepEqual(await lastSeen(), [t, t, t, t, t], 'an older use recorded late changes nothing');
        assert.deepEqual(await store.get(id, { fresh: true }), { ...session, lastSeenAt: t }, 'nothing else changes');
      });

      it('of an unknown, malformed or ended session is harmless and creates nothing', async () => {
        const session = sampleSession();
        const id = await store.create(session);
        await store.destroy(id);
        await store.touch(id, Date.now());
        await store.touch(newSessionId(), Date.now());
        await store.touch('not-an-id', Date.now());
        assert.equal(await store.get(id, { fresh: true }), null, 'an ended session stays ended');
        assert.equal(await store.byHandle(session.handle), null);
        assert.equal((await store.list({ limit: 100, offset: 0 })).total, 0);
      });
    });

    describe('idle timeout', () => {
      it('a session unused for idleTimeoutMs ends (get fresh, byHandle, list, find); one used in time stays', async () => {
        const idle = await open({ idleTimeoutMs: 300 });
        const user = sampleSession().user;
        const used = sampleSession({ user: { ...user } });
        const unused = sampleSession({ user: { ...user } });
        const [createdUsed, createdUnused] = [used.lastSeenAt, unused.lastSeenAt]; // (a store may keep the objects it was given)
        const [usedId, unusedId] = [await idle.create(used), await idle.create(unused)];
        assert.notEqual(await idle.get(unusedId, { fresh: true }), null, 'live before its idle timeout');
        // Keep using one session until the other one ends: only the uses can explain the difference.
        await eventually(
          'the unused session to end',
          async () => {
            await idle.touch(usedId, Date.now());
            return (await idle.get(unusedId, { fresh: true })) === null;
          },
          3_000,
        );
        assert.ok(Date.now() - createdUnused >= 300, 'not before its idle timeout');
        assert.equal(await idle.byHandle(unused.handle), null);
        const stillUsed = await idle.get(usedId, { fresh: true });
        assert.ok(stillUsed !== null && stillUsed.lastSeenAt > createdUsed, 'the used session stays, its last use recorded');
        assert.notEqual(await idle.byHandle(used.handle), null);
        const listed = await idle.list({ limit: 100, offset: 0 });
        assert.deepEqual({ handles: handlesOf(listed.sessions), total: listed.total }, { handles: [used.handle], total: 1 });
        assert.deepEqual(handlesOf((await idle.list({ user: user.sub, limit: 100, offset: 0 })).sessions), [used.handle]);
        assert.deepEqual(handlesOf(await idle.find({ sub: user.sub })), [used.handle]);
        assert.equal(await idle.update(unused.handle, (current) => current), false, 'an idle-ended session cannot be updated');
        assert.equal(await idle.revoke([unused.handle, used.handle]), 1, 'only the used one was live');
      });

      it('a use recorded after the session went idle does not bring it back, even when dated before', async () => {
        const idle = await open({ idleTimeoutMs: 300 });
        const session = sampleSession();
        const id = await idle.create(session);
        await eventually('the session to go idle', async () => (await idle.get(id, { fresh: true })) === null, 3_000);
        await idle.touch(id, session.lastSeenAt + 250); // a use within its life, recorded late
        assert.equal(await idle.get(id, { fresh: true }), null);
        assert.equal(await idle.byHandle(session.handle), null);
        await idle.touch(id, Date.now());
        assert.equal(await idle.get(id, { fresh: true }), null);
        assert.equal((await idle.list({ limit: 100, offset: 0 })).total, 0);
      });

      it('an older use recorded after a newer one does not shorten the idle life', async () => {
        const idle = await open({ idleTimeoutMs: 1_000 });
        const session = sampleSession();
        const t = session.lastSeenAt;
        const id = await idle.create(session);
        await idle.touch(id, t - 900); // 900 ms older than the last use: would end it at t + 100
        await eventually('a moment past that wrong end', () => Date.now() > t + 400, 2_000);
        const read = await idle.get(id, { fresh: true });
        assert.ok(read !== null, 'still live: last used at t, idle timeout 1 s');
        assert.equal(read.lastSeenAt, t);
      });
    });

    it('requestRevalidation reaches every listener, later (fire and forget); an unsubscribed listener hears no more', async () => {
      const session = sampleSession();
      await store.create(session);
      const heard = new Recorder<string>();
      const alsoHeard = new Recorder<string>();
      const stop = store.onRevalidationRequest(heard.listener);
      store.onRevalidationRequest(alsoHeard.listener);
      await fixture.listening?.();
      store.requestRevalidation(session.handle);
      assert.deepEqual(heard.values, [], 'the request does not wait for the listeners');
      assert.equal(await heard.next((handle) => handle === session.handle), session.handle);
      await alsoHeard.next((handle) => handle === session.handle);

      stop();
      const next = newSessionHandle();
      store.requestRevalidation(next);
      await alsoHeard.next((handle) => handle === next);
      assert.deepEqual(heard.values, [session.handle], 'the unsubscribed listener heard nothing more');
      assert.deepEqual(alsoHeard.values, [session.handle, next], 'each request once');
    });

    describe('lockRefresh', () => {
      it('a second lock on the same session is refused while held, allowed after unlock; sessions lock independently', async () => {
        const [handle, other] = [newSessionHandle(), newSessionHandle()];
        assert.equal(await store.lockRefresh(handle, 60_000), true);
        assert.equal(await store.lockRefresh(handle, 60_000), false);
        assert.equal(await store.lockRefresh(other, 60_000), true, 'another session has its own lock');
        await store.unlockRefresh(handle);
        assert.equal(await store.lockRefresh(handle, 60_000), true);
        assert.equal(await store.lockRefresh(handle, 60_000), false);
        await store.unlockRefresh(newSessionHandle()); // not held: harmless
        assert.equal(await store.lockRefresh(other, 60_000), false, 'still held');
      });

      it('a lock never released lapses after its TTL', async () => {
        const handle = newSessionHandle();
        const started = Date.now();
        assert.equal(await store.lockRefresh(handle, 300), true);
        assert.equal(await store.lockRefresh(handle, 300), false);
        await eventually('the lock to lapse', () => store.lockRefresh(handle, 60_000), 3_000);
        assert.ok(Date.now() - started >= 290, 'not before its TTL');
        assert.equal(await store.lockRefresh(handle, 60_000), false, 'taken again, for a minute');
      });
    });

    it('close keeps what was written: the store the next process opens reads each live session as last written, and no ended one', async () => {
      const t = Date.now();
      const kept = sampleSession({ createdAt: t - 120_000, lastSeenAt: t - 60_000 });
      const expected = { ...structuredClone(kept), lastSeenAt: t }; // (a store may keep the objects it was given)
      const [loggedOut, revoked] = [sampleSession(), sampleSession()];
      const keptId = await store.create(kept);
      await store.touch(keptId, t); // the last use, which an idle timeout counts from
      const loggedOutId = await store.create(loggedOut);
      const revokedId = await store.create(revoked);
      await store.destroy(loggedOutId);
      assert.equal(await store.revoke([revoked.handle]), 1);
      await store.close();

      const next = await fixture.reopen();
      assert.deepEqual(await next.get(keptId), expected, 'still signed in after the restart, last use included');
      assert.deepEqual(await next.byHandle(kept.handle), expected);
      assert.deepEqual(handlesOf(await next.find({ sub: kept.user.sub })), [kept.handle]);
      assert.deepEqual(handlesOf((await next.list({ limit: 10, offset: 0 })).sessions), [kept.handle], 'the ended ones are not listed');
      for (const id of [loggedOutId, revokedId]) assert.equal(await next.get(id), null, 'a logout or a revocation stays done');
    });
  });
}
