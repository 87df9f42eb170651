/** Resources a test file closes after each test, whatever the test did (not a test file itself). */

const tracked: Array<() => unknown> = [];

/**
 * Registers `resource` to be closed by {@link closeTracked}, which a test file runs after each test
 * and after all of them (`redisForFile` in redis.ts registers both): a test that fails or times out half-way must not leave a Redis
 * connection reconnecting forever, which would keep the test process (and `npm test`) from exiting.
 */
export function track<T>(resource: T, close: (resource: T) => unknown): T {
  tracked.push(() => close(resource));
  return resource;
}

/** Closes every tracked resource, newest first; failures are ignored (some were closed already). */
export async function closeTracked(): Promise<void> {
  for (const close of tracked.splice(0).reverse()) {
    await Promise.resolve()
      .then(close)
      .catch(() => undefined);
  }
}
