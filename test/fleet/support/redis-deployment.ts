/** What a scenario needs of the fleet's Redis, whichever way it runs (Sentinel or Cluster). */
import type { FleetHost } from './network.js';

export interface RedisDeployment {
  /** `sentinel` or `cluster`, for names and figures. */
  kind: 'sentinel' | 'cluster';
  /** The variables every Gatehouse process gets to reach it (mode, TLS, password). */
  env: Record<string, string>;
  /** The hosts it runs on. */
  hosts: readonly FleetHost[];
  /** A host running a primary now (in a cluster, the one holding most keys): the one a failover scenario cuts off. */
  primaryHost(): Promise<FleetHost>;
  /** Whether the rest has promoted a replica for every primary `cut` had (asked of the hosts still reachable). */
  failedOver(cut: FleetHost): Promise<boolean>;
  /** Resolves once every node is back in the deployment with its replicas in sync (after a host returns). */
  settled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}
