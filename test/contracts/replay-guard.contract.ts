/**
 * The ReplayGuard contract (shared/backends/replay-guard.ts), run against every implementation: a
 * back-channel logout token's `jti` is accepted once, and refused again for as long as it is
 * remembered, by this process and by every other one. Not a test file: *.test.ts call it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { ReplayGuard } from '../../shared/backends/replay-guard.js';
import { eventually } from '../support/eventually.js';
import { SUITE } from '../support/redis.js';

/** A guard over fresh, empty storage, another over the same storage, and disposal. */
export interface ReplayGuardFixture {
  guard: ReplayGuard;
  /** A guard as another worker (or the same gateway after a restart) has it, over the same storage. */
  another(): Promise<ReplayGuard>;
  close(): Promise<void>;
}

const MINUTE = 60_000;
const jti = () => `jti-${randomUUID()}`;

export function replayGuardContract(name: string, factory: () => Promise<ReplayGuardFixture>): void {
  describe(`ReplayGuard contract: ${name}`, SUITE, () => {
    let fixture: ReplayGuardFixture;
    let guard: ReplayGuard;
    beforeEach(async () => {
      fixture = await factory();
      guard = fixture.guard;
    });
    afterEach(async () => {
      await fixture.close();
    });

    it('the first use of an id is accepted, every later one refused while it is remembered', async () => {
      const id = jti();
      const until = Date.now() + 5 * MINUTE;
      assert.equal(await guard.firstUse(id, until), true);
      assert.equal(await guard.firstUse(id, until), false);
      assert.equal(await guard.firstUse(id, Date.now() + 10 * MINUTE), false, 'a replay asking for longer is refused too');
    });

    it('ids are independent: other ids, ids differing only in case, long and non-ASCII ids', async () => {
      const until = Date.now() + 5 * MINUTE;
      const ids = ['abc', 'ABC', 'abc ', 'x'.repeat(2_000), 'jti-ünïcödé-🔑', '', jti()];
      for (const id of ids) assert.equal(await guard.firstUse(id, until), true, JSON.stringify(id.slice(0, 20)));
      for (const id of ids) assert.equal(await guard.firstUse(id, until), false, JSON.stringify(id.slice(0, 20)));
    });

    it('an id is forgotten once its time runs out, and can then be used (once) again', async () => {
      const id = jti();
      const kept = jti();
      const started = Date.now();
      assert.equal(await guard.firstUse(id, started + 300), true);
      assert.equal(await guard.firstUse(kept, started + 5 * MINUTE), true);
      assert.equal(await guard.firstUse(id, started + 300), false);
      await eventually('the id to be forgotten', () => guard.firstUse(id, Date.now() + 5 * MINUTE), 3_000);
      assert.ok(Date.now() - started >= 290, 'not before its time');
      assert.equal(await guard.firstUse(id, Date.now() + 5 * MINUTE), false, 'remembered again, for its new time');
      assert.equal(await guard.firstUse(kept, Date.now() + 5 * MINUTE), false, 'an id with time left is still refused');
    });

    it('another guard over the same storage (another worker, a restart) refuses the ids this one used, and the other way round', async () => {
      const other = await fixture.another();
      const until = Date.now() + 5 * MINUTE;
      const [mine, theirs] = [jti(), jti()];
      assert.equal(await guard.firstUse(mine, until), true);
      assert.equal(await other.firstUse(mine, until), false);
      assert.equal(await other.firstUse(theirs, until), true);
      assert.equal(await guard.firstUse(theirs, until), false);
    });

    it('of many uses of one id at once, on two guards, exactly one is accepted', async () => {
      const other = await fixture.another();
      const id = jti();
      const until = Date.now() + 5 * MINUTE;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? guard : other).firstUse(id, until)));
      assert.equal(results.filter(Boolean).length, 1, String(results));
    });
  });
}
