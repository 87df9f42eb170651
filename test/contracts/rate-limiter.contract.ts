/** The RateLimiter contract (shared/backends/rate-limiter.ts), run against every implementation. Not a test file. */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { RateLimit } from '../../shared/config/durations.js';
import type { RateLimiter } from '../../shared/backends/rate-limiter.js';
import { SUITE } from '../support/redis.js';

/** Makes limiters with `limit` over a fresh, empty backing store; `close` disposes of all of them. */
export interface RateLimiterFixture {
  limiter(limit: RateLimit | null): RateLimiter;
  close(): Promise<void>;
}

export function rateLimiterContract(name: string, factory: () => Promise<RateLimiterFixture>): void {
  describe(`RateLimiter contract: ${name}`, SUITE, () => {
    let fixture: RateLimiterFixture;
    beforeEach(async () => {
      fixture = await factory();
    });
    afterEach(async () => {
      await fixture.close();
    });

    it('a null limit allows everything', async () => {
      const limiter = fixture.limiter(null);
      assert.equal(limiter.limit, null);
      for (let i = 0; i < 50; i++) assert.equal((await limiter.consume('198.51.100.1')).allowed, true);
    });

    it('allows `points` requests per window with a falling `remaining`, then refuses with the time to the reset', async () => {
      const limit = { points: 3, durationMs: 60_000 };
      const limiter = fixture.limiter(limit);
      assert.deepEqual(limiter.limit, limit);
      const decisions = [];
      for (let i = 0; i < 4; i++) decisions.push(await limiter.consume('198.51.100.2'));
      assert.deepEqual(decisions.map((d) => [d.allowed, d.limit, d.remaining]), [[true, 3, 2], [true, 3, 1], [true, 3, 0], [false, 3, 0]]);
      const refused = decisions[3]!;
      assert.ok(refused.resetMs > 0 && refused.resetMs <= 60_000, String(refused.resetMs));
    });

    it('requests arriving together are decided in arrival order: exactly `points` allowed, then refusals', async () => {
      const limiter = fixture.limiter({ points: 5, durationMs: 60_000 });
      const decisions = await Promise.all(Array.from({ length: 8 }, () => limiter.consume('198.51.100.3')));
      assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, true, false, false, false]);
      assert.deepEqual(decisions.map((d) => d.remaining), [4, 3, 2, 1, 0, 0, 0, 0]);
      const other = await Promise.all([limiter.consume('198.51.100.4'), limiter.consume('198.51.100.3')]);
      assert.deepEqual(other.map((d) => d.allowed), [true, false], 'a batch is per key');
    });

    it('requests arriving while an earlier batch is being counted come after it', async () => {
      const limiter = fixture.limiter({ points: 5, durationMs: 60_000 });
      const first = Array.from({ length: 3 }, () => limiter.consume('198.51.100.5'));
      await new Promise(setImmediate); // the first batch has been sent
      const second = Array.from({ length: 4 }, () => limiter.consume('198.51.100.5'));
      const decisions = await Promise.all([...first, ...second]);
      assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, true, false, false]);
    });

    it('counts each key on its own', async () => {
      const limiter = fixture.limiter({ points: 1, durationMs: 60_000 });
      assert.equal((await limiter.consume('a')).allowed, true);
      assert.equal((await limiter.consume('a')).allowed, false);
      assert.equal((await limiter.consume('b')).allowed, true);
    });

    it('a new window starts once the reset time has passed', async () => {
      const limiter = fixture.limiter({ points: 1, durationMs: 1_000 });
      assert.equal((await limiter.consume('c')).allowed, true);
      const refused = await limiter.consume('c');
      assert.equal(refused.allowed, false);
      await new Promise((resolve) => setTimeout(resolve, refused.resetMs + 50)); // the window itself is the event
      assert.equal((await limiter.consume('c')).allowed, true);
    });
  });
}
