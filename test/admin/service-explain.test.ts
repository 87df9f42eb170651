/**
 * "Who can reach this?" (design.md §4.18): `POST /api/services/:id/explain` answers every outcome,
 * and each answer agrees with what the data plane does to the same request sent for real through
 * the embedded gateway: every spelling of a deny path, methods (HEAD under GET), the CORS
 * preflight, the access policy by subject, email, domain and groups, a rule's own policy, a
 * disabled service, and a path another service takes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SessionUser } from '../../shared/types.js';
import { useAdminSession } from '../support/admin-session.js';
import { rawRequest } from '../support/raw-connection.js';

const policy = (lists: Record<string, string[]>) => ({ groups: [], emails: [], emailDomains: [], subjects: [], ...lists });

const ids: Record<'app' | 'open' | 'off' | 'special', string> = { app: '', open: '', off: '', special: '' };

const env = useAdminSession({ upstream: true }, async (env) => {
  const target = env.upstream.origin;
  ids.app = await env.createService({
    name: 'App',
    path: '/app',
    targetUrl: target,
    requireAuth: true,
    access: policy({ groups: ['staff'], emails: ['boss@example.com'], emailDomains: ['partner.example'], subjects: ['robot'] }),
    corsPreflight: 'public',
    rules: [
      { paths: ['/internal'], action: 'deny' },
      { paths: ['/hooks/*'], methods: ['POST'], action: 'public' },
      { paths: ['/health'], methods: ['GET'], action: 'public' },
      { paths: ['/admin'], action: 'require', access: policy({ groups: ['admins'] }) },
      { paths: ['/team'], action: 'require', access: null },
    ],
  });
  ids.special = await env.createService({ name: 'Special', path: '/app/special', targetUrl: target, requireAuth: false });
  ids.open = await env.createService({ name: 'Open', path: '/open', targetUrl: target, requireAuth: false, rules: [{ paths: ['/private'], action: 'require' }] });
  ids.off = await env.createService({ name: 'Off', path: '/off', targetUrl: target, requireAuth: true });
  const toggled = await env.call('PATCH', `/api/services/${ids.off}/toggle`, { as: env.admin, json: { enabled: false } });
  assert.equal(toggled.status, 200, toggled.text);
});

type Caller = Partial<Pick<SessionUser, 'sub' | 'email' | 'groups'>>;

/** What the data plane answers a request with, by the explanation's outcome (an echo upstream answers 200). */
const STATUS_OF: Record<string, number> = { public: 200, allowed: 200, deny: 403, refused: 403, 'sign-in required': 401, disabled: 503 };

async function explain(service: keyof typeof ids, question: Record<string, unknown>) {
  const response = await env.call('POST', `/api/services/${ids[service]}/explain`, { as: env.admin, json: question });
  assert.equal(response.status, 200, response.text);
  return response.json;
}

/** Sends `method target` byte for byte (a fetch client would rewrite `\` and `//`), as `user` when given. */
async function send(method: string, target: string, user?: Caller, headers: Record<string, string> = {}): Promise<number> {
  const cookie = user === undefined ? undefined : (await env.signIn({ name: 'Caller', email: '', isAdmin: false, ...user })).cookie;
  const all = { ...headers, ...(cookie === undefined ? {} : { Cookie: cookie }), ...(method === 'POST' ? { 'Content-Length': '0' } : {}) };
  const lines = Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const port = Number(new URL(env.publicUrl).port);
  return (await rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: gatehouse.test\r\n${lines}Connection: close\r\n\r\n`)).status;
}

/**
 * Asks the explanation of `method path` for `user` and sends the request for real: the outcome is
 * `outcome`, and the data plane's status is the one that outcome means. Returns the explanation.
 */
async function agrees(service: keyof typeof ids, method: string, path: string, user: Caller | undefined, outcome: string, extra: { corsPreflight?: boolean; headers?: Record<string, string> } = {}) {
  const question = { path, method, user: user ?? null, ...(extra.corsPreflight ? { corsPreflight: true } : {}) };
  const answer = await explain(service, question);
  assert.equal(answer.outcome, outcome, `${method} ${path}: ${answer.reason}`);
  assert.equal(answer.matchesService, true);
  assert.equal(await send(method, path, user, extra.headers), STATUS_OF[outcome], `${method} ${path} sent for real`);
  return answer;
}

describe('POST /api/services/:id/explain: each outcome, as the data plane decides it', () => {
  it('deny: the rule that decides, its index, and a sentence; 403 for everyone at the data plane', async () => {
    const answer = await agrees('app', 'GET', '/app/internal/x', undefined, 'deny');
    assert.deepEqual(answer, {
      method: 'GET',
      path: '/app/internal/x',
      routingKey: '/app/internal/x',
      matchesService: true,
      decidedBy: 'rule',
      rule: { index: 0, paths: ['/internal'], action: 'deny' },
      outcome: 'deny',
      reason: 'Rule 1 (deny /internal) matches: 403 Access denied for everyone, signed in or not.',
    });
    await agrees('app', 'GET', '/app/internal', { sub: 'boss', groups: ['staff', 'admins'] }, 'deny');
  });

  it('every respelling of the deny path (case, %2F, ;, //, \\, encoded letters) is explained as the deny rule, and refused for real', async () => {
    const spellings = ['/app/INTERNAL', '/APP/Internal', '/app/%69nternal', '/app%2Finternal', '/app%2finternal', '/app/internal;jsessionid=1', '/app//internal', '/app\\internal', '/app%5Cinternal', '/app/;x/internal'];
    for (const path of spellings) {
      const answer = await agrees('app', 'GET', path, undefined, 'deny');
      assert.equal(answer.rule.index, 0, path);
      assert.equal(answer.routingKey, '/app/internal', path);
    }
    const query = await explain('app', { path: '/app/internal?x=/health' });
    assert.deepEqual([query.path, query.outcome], ['/app/internal', 'deny'], 'the query is no part of the path');
  });

  it('public by a rule: a webhook POST without sign-in; methods: GET covers HEAD, another method falls to the service', async () => {
    const hook = await agrees('app', 'POST', '/app/hooks/github', undefined, 'public');
    assert.deepEqual([hook.decidedBy, hook.rule.index], ['rule', 1]);
    assert.match(hook.reason, /^Rule 2 \(public POST \/hooks\/\*\) matches: no sign-in needed\.$/);
    const head = await agrees('app', 'HEAD', '/app/health', undefined, 'public');
    assert.equal(head.rule.index, 2);
    const lower = await explain('app', { path: '/app/health', method: 'head' });
    assert.deepEqual([lower.method, lower.outcome], ['HEAD', 'public'], 'a method in any case is read in capitals');
    const post = await agrees('app', 'POST', '/app/health', undefined, 'sign-in required');
    assert.deepEqual([post.decidedBy, post.rule], ['service', undefined]);
    assert.match(post.reason, /^No rule matches and the service requires sign-in: an anonymous request must sign in first/);
    await agrees('app', 'GET', '/app/hooks/github', undefined, 'sign-in required');
    const named = await agrees('app', 'POST', '/app/hooks/github', { sub: 'outsider' }, 'public');
    assert.match(named.reason, /this caller is still named to the target/);
  });

  it('the CORS preflight: public before a require rule, never before a deny rule; an OPTIONS that is no preflight needs sign-in', async () => {
    const preflight = { Origin: 'https://ui.example', 'Access-Control-Request-Method': 'PUT' };
    const passed = await agrees('app', 'OPTIONS', '/app/admin', undefined, 'public', { corsPreflight: true, headers: preflight });
    assert.deepEqual([passed.decidedBy, passed.rule], ['corsPreflight', undefined]);
    assert.match(passed.reason, /corsPreflight: public/);
    const denied = await agrees('app', 'OPTIONS', '/app/internal', undefined, 'deny', { corsPreflight: true, headers: preflight });
    assert.equal(denied.rule.index, 0);
    await agrees('app', 'OPTIONS', '/app/admin', undefined, 'sign-in required');
  });

  it("the service's access policy: allowed by subject, email, email domain or group, each said; refused otherwise", async () => {
    const cases: [Caller, string][] = [
      [{ sub: 'robot' }, 'their subject'],
      [{ sub: 'b', email: 'Boss@Example.com' }, 'their email'],
      [{ sub: 'p', email: 'someone@partner.example' }, 'their email domain'],
      [{ sub: 's', groups: ['visitors', 'staff'] }, 'one of their groups'],
    ];
    for (const [caller, by] of cases) {
      const answer = await agrees('app', 'GET', '/app/reports', caller, 'allowed');
      assert.equal(answer.decidedBy, 'service');
      assert.match(answer.reason, new RegExp(`lets this caller in: ${by} is on the access list\\.$`), JSON.stringify(caller));
    }
    const refused = await agrees('app', 'GET', '/app/reports', { sub: 'outsider', email: 'x@partner.example.org', groups: ['visitors'] }, 'refused');
    assert.match(refused.reason, /on none of the service's access lists, so 403 Access denied/);
  });

  it("a require rule's own policy overrides the service's; access null lets any signed-in caller in", async () => {
    const admin = await agrees('app', 'GET', '/app/admin/x', { sub: 'a', groups: ['admins'] }, 'allowed');
    assert.deepEqual([admin.decidedBy, admin.rule.index, admin.rule.access.groups], ['rule', 3, ['admins']]);
    const staff = await agrees('app', 'GET', '/app/admin/x', { sub: 's', groups: ['staff'] }, 'refused');
    assert.match(staff.reason, /^Rule 4 \(require groups=admins \/admin\) matches: this caller is signed in but on none of its access lists/);
    await agrees('app', 'GET', '/app/admin', undefined, 'sign-in required');
    const team = await agrees('app', 'GET', '/app/team', { sub: 'anyone' }, 'allowed');
    assert.match(team.reason, /any signed-in caller passes/);
  });

  it('an open service: public without a rule; its require rule asks for sign-in', async () => {
    const open = await agrees('open', 'GET', '/open/page', undefined, 'public');
    assert.deepEqual([open.decidedBy, open.reason], ['service', 'No rule matches and the service is open to anyone: no sign-in needed.']);
    const spelled = await agrees('open', 'GET', '/open/PRIVATE/x', undefined, 'sign-in required');
    assert.equal(spelled.rule.index, 0);
    assert.match(spelled.reason, /then any signed-in caller passes/);
    await agrees('open', 'GET', '/open/private', { sub: 'someone' }, 'allowed');
  });

  it('a disabled service: 503 whatever its settings say', async () => {
    const answer = await agrees('off', 'GET', '/off/x', { sub: 'admin-sub', groups: ['staff'] }, 'disabled');
    assert.deepEqual([answer.decidedBy, answer.rule], ['service', undefined]);
  });

  it('a path that is not the service\'s: another prefix, a longer prefix another service takes, the gateway\'s own paths', async () => {
    const longer = await explain('app', { path: '/APP/Special/page' });
    assert.equal(longer.matchesService, false);
    assert.deepEqual([longer.decidedBy, longer.outcome], ['routing', 'elsewhere']);
    assert.deepEqual(longer.routedTo, { id: ids.special, name: 'Special', path: '/app/special' });
    assert.equal(await send('GET', '/APP/Special/page'), 200, 'the open service takes it, no sign-in');
    for (const path of ['/other', '/apple/x', '/.gatehouse/login']) {
      const answer = await explain('app', { path });
      assert.deepEqual([answer.matchesService, answer.outcome, answer.routedTo], [false, 'elsewhere', undefined], path);
    }
    assert.match((await explain('app', { path: '/apple' })).reason, /not under the service's path \/app, on whole segments/);
    const hosted = await explain('app', { path: '/app/x', host: 'App.Example.com.' });
    assert.equal(hosted.matchesService, true, 'no service names that host: the host-less table routes it');
  });
});
