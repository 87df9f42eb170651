import { after, before } from 'node:test';
import { startDataPlane, type DataPlaneOptions, type TestDataPlane } from './data-plane.js';
import { startEchoUpstream, type EchoUpstream } from './upstream.js';

/** What {@link useEchoDataPlane} gives the tests once its `before` hook has run. */
export interface EchoDataPlane {
  readonly upstream: EchoUpstream;
  readonly gateway: TestDataPlane;
}

/**
 * A data plane alone (support/data-plane.ts) in front of an echo upstream, for the tests of the
 * file or `describe` it is called in: started in a `before` hook with the options `options` gives
 * for the upstream's origin (`http://127.0.0.1:<port>`), closed in an `after` hook (the data
 * plane first, then the upstream). Reading a field before the hook ran throws.
 */
export function useEchoDataPlane(options: (origin: string) => DataPlaneOptions): EchoDataPlane {
  let upstream: EchoUpstream | undefined;
  let gateway: TestDataPlane | undefined;
  before(async () => {
    upstream = await startEchoUpstream();
    gateway = await startDataPlane(options(upstream.origin));
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useEchoDataPlane: ${name} is read before its before hook ran`);
    return value;
  };
  return {
    get upstream() {
      return started(upstream, 'upstream');
    },
    get gateway() {
      return started(gateway, 'gateway');
    },
  };
}
