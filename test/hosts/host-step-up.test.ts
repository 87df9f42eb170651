/**
 * Step-up sign-in (design.md §4.18) on a service host (design.md §4.16), embedded and split: a
 * host session of another `acr` than the service accepts is sent, by way of the sign-in origin with
 * `acr_values`, to the provider (even though the sign-in origin's session could be handed over at
 * once), comes back to its page on the host, and the user keeps one session; a sign-in that still
 * falls short ends at the 403 page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { browse } from '../support/browserless-login.js';
import { browserRequest } from '../support/browser-request.js';
import { eventually } from '../support/eventually.js';
import { startHostSignInGateway, type HostSignInGateway } from '../support/host-sign-in-gateways.js';
import { RecordingCookieJar } from '../support/recording-cookie-jar.js';
import { account, echoOf, signInAt } from './host-flows.js';

const USERS = { refused: account('host-step-refused'), stepped: account('host-step-up') };
const HOST = 'strong.localhost';

for (const topology of ['embedded', 'split'] as const) {
  describe(`step-up on a service host, ${topology}`, { timeout: 120_000 }, () => {
    let gw: HostSignInGateway;
    const strong = (path: string) => `${gw.hostOrigin(HOST)}${path}`;

    before(async () => {
      gw = await startHostSignInGateway(topology, Object.values(USERS), { acrValues: ['pwd', 'mfa'] });
      const created = await gw.call('POST', '/api/services', { as: gw.admin, json: { name: 'Strong', path: '/', hosts: [HOST], targetUrl: `${gw.upstream.origin}/strong`, acr: ['mfa'] } });
      assert.equal(created.status, 201, created.text);
      for (const port of gw.listenerPorts) {
        await eventually(`${HOST} routed on ${port}`, async () => (await browserRequest(new RecordingCookieJar(), `http://${HOST}:${port}/x`, { accept: 'application/json' })).status === 401, 20_000);
      }
    });
    after(() => gw?.close());

    const handlesOf = async (sub: string) => ((await gw.call('GET', `/api/sessions?user=${encodeURIComponent(sub)}`, { as: gw.admin })).json.sessions as { id: string }[]).map((s) => s.id);

    /**
     * A browser signed in (acr `pwd`) on app.localhost, then sent from `strong/page` to the sign-in
     * origin and handed its session at once; resolves with the jar and the page's step-up redirect.
     */
    async function steppedUpFrom(user: (typeof USERS)[keyof typeof USERS]): Promise<{ jar: RecordingCookieJar; location: string }> {
      const jar = new RecordingCookieJar();
      await signInAt(jar, `${gw.hostOrigin('app.localhost')}/start`, user);
      const handedOver = await browse(strong('/page?x=1'), jar, undefined, gw.hostOrigin(HOST));
      assert.match(handedOver.url, /\/\.gatehouse\/callback\?code=/, 'handed over without the provider');
      const page = await browserRequest(jar, new URL(handedOver.finalLocation!, handedOver.url).href, { initiator: handedOver.url });
      assert.equal(page.status, 302, 'a pwd session is stepped up');
      const login = new URL(page.location!);
      assert.deepEqual([login.origin, login.pathname, login.searchParams.get('acr_values')], [gw.publicUrl, '/auth/login', 'mfa']);
      return { jar, location: login.href };
    }

    it('goes to the provider with acr_values, back to the page on the host, in the same session', async () => {
      const user = USERS.stepped;
      const { jar, location } = await steppedUpFrom(user);
      const before = await handlesOf(user.sub);
      gw.idp.nextSignIn({ acr: 'mfa' });
      const walked = await browse(location, jar, { email: user.email, password: user.password }, gw.hostOrigin(HOST));
      assert.equal(gw.idp.authorizationRequests().at(-1)!.get('acr_values'), 'mfa', 'asked of the provider, though the origin was signed in');
      assert.match(walked.url, /\/\.gatehouse\/callback\?code=/);
      const page = await browserRequest(jar, new URL(walked.finalLocation!, walked.url).href, { initiator: walked.url });
      assert.equal(echoOf(page).url, '/strong/page?x=1');
      assert.deepEqual(await handlesOf(user.sub), before, 'the same session, no second one');
    });

    it('a sign-in still of another acr ends at the 403 page', async () => {
      const { jar, location } = await steppedUpFrom(USERS.refused);
      const walked = await browse(location, jar, { email: USERS.refused.email, password: USERS.refused.password }, gw.hostOrigin(HOST));
      assert.equal(walked.status, 403);
      assert.match(walked.body, /Stronger sign-in needed/);
    });
  });
}
