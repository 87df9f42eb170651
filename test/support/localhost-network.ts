/**
 * The network as a browser on the gateway's machine sees it, for this test process's HTTP client
 * (undici's global dispatcher, which `request`, `browse` and the API client use):
 * - `localhost` and every `*.localhost` name reach 127.0.0.1 (RFC 6761 §6.3). Chromium resolves
 *   them itself; Node's resolver (glibc) does not know `app.localhost`.
 * - Connections to the gateway's public port are spread over its listeners in turn, one request
 *   per connection, as a load balancer in front of a fleet of proxy processes would: each request
 *   of a sign-in may reach another process. The `Host` field stays the one the URL names.
 * - Every request is logged, so a test can tell which hops a browser made (and that none reached
 *   the identity provider).
 */
import { Agent, buildConnector, getGlobalDispatcher, setGlobalDispatcher, type Dispatcher } from 'undici';

/** What {@link installLocalhostNetwork} put in place. */
export interface LocalhostNetwork {
  /**
   * Every request sent since, oldest first, as `METHOD absolute-url`: the test's, and an embedded
   * gateway's own calls through `fetch` (to the identity provider), which share the dispatcher.
   */
  readonly requests: string[];
  /** Closes its connections and puts back the dispatcher there was before. */
  restore(): Promise<void>;
}

/** True for `localhost` and its subdomains (RFC 6761 §6.3: always loopback). */
function isLocalhostName(hostname: string): boolean {
  return hostname === 'localhost' || hostname.endsWith('.localhost');
}

/**
 * Makes undici's global dispatcher behave as described in the module comment. `publicPort` is
 * PUBLIC_URL's port; `listenerPorts` the ports of the listeners behind it (default: that one).
 */
export function installLocalhostNetwork(publicPort: number, listenerPorts: readonly number[] = [publicPort]): LocalhostNetwork {
  const requests: string[] = [];
  const direct = buildConnector({});
  let turn = 0;
  const agent = new Agent({
    // A new connection per request, so the next one can go to another listener.
    maxRequestsPerClient: 1,
    connect(options, callback) {
      const port = Number(options.port || 80) === publicPort ? listenerPorts[turn++ % listenerPorts.length]! : Number(options.port || 80);
      const hostname = isLocalhostName(options.hostname) ? '127.0.0.1' : options.hostname;
      direct({ ...options, hostname, port: String(port) }, callback);
    },
  });
  const logged = agent.compose((dispatch) => (options: Dispatcher.DispatchOptions, handler) => {
    requests.push(`${options.method} ${new URL(options.path, options.origin).href}`);
    return dispatch(options, handler);
  });
  const previous = getGlobalDispatcher();
  setGlobalDispatcher(logged);
  return {
    requests,
    async restore() {
      setGlobalDispatcher(previous);
      await agent.close();
    },
  };
}
