/**
 * The host table (proxy/routing/host-routes.ts) and the request's host name
 * (proxy/routing/request-host.ts), on their own: which table each spelling of a host reaches.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HostRoutes } from '../../proxy/routing/host-routes.js';
import { hostField, requestHostName } from '../../proxy/routing/request-host.js';
import { service } from '../support/samples.js';

const TARGET = 'http://127.0.0.1:1';
const app = service({ path: '/', targetUrl: TARGET, name: 'app', hosts: ['app.localhost'] });
const appApi = service({ path: '/api', targetUrl: TARGET, name: 'app api', hosts: ['app.localhost'] });
const wildcard = service({ path: '/', targetUrl: TARGET, name: 'wildcard', hosts: ['*.apps.localhost'] });
const exactUnderWildcard = service({ path: '/', targetUrl: TARGET, name: 'exact', hosts: ['special.apps.localhost'] });
const parent = service({ path: '/', targetUrl: TARGET, name: 'parent', hosts: ['apps.localhost'] });
const pathOnly = service({ path: '/docs', targetUrl: TARGET, name: 'docs' });
const root = service({ path: '/', targetUrl: TARGET, name: 'root' });

/** The service name `host` and `path` reach, `hostless:` first when it went to the host-less table. */
function reached(routes: HostRoutes, host: string, path: string): string | undefined {
  const site = routes.siteOf(['Host', host]);
  const table = site?.table ?? routes.hostless;
  const name = table.lookup(path)?.service.name;
  return site === undefined ? `hostless:${name}` : name;
}

describe('HostRoutes', () => {
  const routes = new HostRoutes([app, appApi, wildcard, exactUnderWildcard, parent, pathOnly, root]);

  it('routes a named host only among the services that name it, at their paths', () => {
    assert.equal(reached(routes, 'app.localhost', '/'), 'app');
    assert.equal(reached(routes, 'app.localhost', '/api/x'), 'app api');
    // /docs is a host-less service's path: on a named host it is that host's root service's
    assert.equal(reached(routes, 'app.localhost', '/docs'), 'app');
  });

  it('gives one label under a wildcard its table, an exact name winning over it', () => {
    assert.equal(reached(routes, 'a.apps.localhost', '/'), 'wildcard');
    assert.equal(reached(routes, 'special.apps.localhost', '/'), 'exact');
    assert.equal(reached(routes, 'apps.localhost', '/'), 'parent', 'the wildcard does not match its own parent');
    assert.equal(reached(routes, 'a.b.apps.localhost', '/docs'), 'hostless:docs', 'nor two labels');
  });

  it('routes every other host, and a request without one, on the host-less table', () => {
    assert.equal(reached(routes, 'gateway.example', '/docs/x'), 'hostless:docs');
    assert.equal(reached(routes, '127.0.0.1:8080', '/'), 'hostless:root');
    assert.equal(routes.siteOf([]), undefined);
    assert.equal(routes.hostless.lookup('/api')?.service.name, 'root', 'a host service is never in the host-less table');
  });

  it('reads the Host in every spelling a client may send', () => {
    for (const host of ['APP.localhost', 'app.localhost.', 'app.localhost:8080', 'App.Localhost.:1']) {
      assert.equal(reached(routes, host, '/'), 'app', host);
    }
    for (const host of ['[::1]:8080', 'app.localhost..', 'app.localhost:', 'app.localhost:80x', 'app..localhost', ' app.localhost', 'app.localhost/x', '', 'x y.apps.localhost', '-a.apps.localhost', '.apps.localhost', '*.apps.localhost', `${'a'.repeat(64)}.apps.localhost`, 'a_b.apps.localhost', 'evil.example/a.apps.localhost']) {
      assert.equal(reached(routes, host, '/docs'), 'hostless:docs', JSON.stringify(host));
    }
  });

  it('makes one route, one pool, of a service named on several hosts', () => {
    const both = service({ path: '/', targetUrl: TARGET, hosts: ['one.localhost', 'two.localhost'] });
    const table = new HostRoutes([both]);
    assert.equal(table.tableFor('one.localhost')?.lookup('/'), table.tableFor('two.localhost')?.lookup('/'));
    assert.equal([...table.routes()].length, 1);
  });

  it('has no hosts while no service names any, whatever the snapshot', () => {
    assert.equal(new HostRoutes([pathOnly, root]).hasHosts, false);
    assert.equal(new HostRoutes([pathOnly, service({ path: '/x', targetUrl: TARGET, hosts: [] })]).hasHosts, false);
    assert.equal(routes.hasHosts, true);
  });
});

describe('the request host', () => {
  it('is the first Host field, in any case of its name', () => {
    assert.equal(hostField(['Accept', '*/*', 'HOST', 'a.localhost']), 'a.localhost');
    assert.equal(hostField(['Accept', '*/*']), undefined);
  });

  it('is lowercased, without its port or one trailing dot, and never an IP literal in brackets', () => {
    assert.equal(requestHostName('A.Example.COM.:443'), 'a.example.com');
    assert.equal(requestHostName('[2001:db8::1]'), undefined);
    assert.equal(requestHostName('[2001:db8::1]:443'), undefined);
    assert.equal(requestHostName('a.example.com:'), undefined, 'an empty port');
    assert.equal(requestHostName('.'), undefined);
    assert.equal(requestHostName('\u00c4PP.localhost'), '\u00c4pp.localhost', 'only ASCII letters are folded');
    assert.equal(requestHostName('A\u212A.localhost'), 'a\u212A.localhost', 'the Kelvin sign is no k');
  });
});
