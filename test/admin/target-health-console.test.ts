/**
 * A service's console page shows its targets (design.md §4.13 "Reports"): url, weight and overall state,
 * and per proxy process its state, since when and its latest error, escaped, in a live region
 * (live-regions.js refreshes it from the same page).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { createService } from '../support/api-client.js';
import { LOCAL_PROXY, nextLocalReport } from '../support/local-proxy-reports.js';

const env = useAdminSession();

/** The page's targets region: the markup live-regions.js swaps in. */
async function targetsRegion(serviceId: string): Promise<string> {
  const page = await env.call('GET', `/dashboard/services/${serviceId}`, { as: env.admin, headers: { accept: 'text/html' } });
  assert.equal(page.status, 200, page.text);
  const region = /<div class="table-wrap" data-live="targets">([\s\S]*?)<\/div>\n<\/section>/.exec(page.text);
  assert.ok(region, 'a live region of targets');
  return region[1]!;
}

/** The row of target `url` in `region`, with the proxy list of the in-process proxy plane left out. */
function row(region: string, url: string): string {
  const found = new RegExp(`<tr data-target="${url.replace(/[.]/g, '\\.')}">[\\s\\S]*?</tr>`).exec(region);
  assert.ok(found, `a row for ${url}`);
  return found[0].replace(new RegExp(`<li data-proxy="${LOCAL_PROXY}">[\\s\\S]*?</li>`), '');
}

describe("a service's page: its targets", () => {
  it('the target with its weight and overall state, and each proxy with its state, since when and last error', async () => {
    const id = await createService(env.gw.origin, env.admin, { name: 'Orders', path: '/orders', targetUrl: 'http://10.1.0.7:8080/api', requireAuth: false });
    const at = Date.now();
    const since = Date.UTC(2026, 10, 25, 8, 15, 0);
    await env.gw.gateway.bus.publishTargetHealth({ proxy: 'web-1:4312', at, services: { [id]: [{ url: 'http://10.1.0.7:8080/api', state: 'ejected', since, lastError: 'ECONNREFUSED' }] } });
    await env.gw.gateway.bus.publishTargetHealth({ proxy: 'web-2:977', at, services: { [id]: [{ url: 'http://10.1.0.7:8080/api', state: 'healthy', since, lastError: null }] } });
    const target = row(await targetsRegion(id), 'http://10.1.0.7:8080/api');
    assert.match(target, /<code>http:\/\/10\.1\.0\.7:8080\/api<\/code>/);
    assert.match(target, /<td data-label="Weight" class="num">1<\/td>/);
    assert.match(target, /<td data-label="State"><span class="badge target-ejected"[^>]*>Ejected<\/span><\/td>/);
    const proxies = [...target.matchAll(/<li data-proxy="([^"]+)">([\s\S]*?)<\/li>/g)].map(([, proxy, line]) => ({ proxy, line: line! }));
    assert.deepEqual(proxies.map((p) => p.proxy), ['web-1:4312', 'web-2:977']);
    assert.match(proxies[0]!.line, /<span class="badge target-ejected"[^>]*>Ejected<\/span> since <time datetime="2026-11-25T08:15:00\.000Z"[^>]*>2026-11-25 08:15:00 UTC<\/time>/);
    assert.match(proxies[0]!.line, /Last error: <code>ECONNREFUSED<\/code>/);
    assert.match(proxies[1]!.line, /<span class="badge target-healthy"[^>]*>Healthy<\/span>/);
    assert.doesNotMatch(proxies[1]!.line, /Last error/);
  });

  it('a target no proxy has reported: unknown, and says so', async () => {
    await nextLocalReport(env.gw.gateway.bus);
    const id = await createService(env.gw.origin, env.admin, { name: 'Quiet', path: '/quiet', targetUrl: 'http://10.1.0.8:8080', requireAuth: false });
    const target = row(await targetsRegion(id), 'http://10.1.0.8:8080');
    assert.match(target, /<td data-label="State"><span class="badge target-unknown"[^>]*>Unknown<\/span><\/td>/);
    assert.match(target, /No proxy process has reported this target in the last minute\./);
  });

  it('escapes what a proxy reports', async () => {
    const id = await createService(env.gw.origin, env.admin, { name: 'Escapes', path: '/escapes', targetUrl: 'http://10.1.0.9:8080', requireAuth: false });
    await env.gw.gateway.bus.publishTargetHealth({
      proxy: '<b>host</b>:1',
      at: Date.now(),
      services: { [id]: [{ url: 'http://10.1.0.9:8080', state: 'unhealthy', since: Date.now(), lastError: '<script>alert(1)</script> & "quotes"' }] },
    });
    const target = row(await targetsRegion(id), 'http://10.1.0.9:8080');
    assert.doesNotMatch(target, /<script>|<b>host/);
    assert.match(target, /<li data-proxy="&lt;b&gt;host&lt;\/b&gt;:1"><code>&lt;b&gt;host&lt;\/b&gt;:1<\/code>/);
    assert.match(target, /Last error: <code>&lt;script&gt;alert\(1\)&lt;\/script&gt; &amp; &quot;quotes&quot;<\/code>/);
  });
});
