/**
 * `POST /auth/backchannel-logout` tried as an attacker would (README "Back-channel logout",
 * design.md §4.12), against a running gateway and the real provider's keys: junk posted in a loop
 * writes one log line a minute, not one per post, and is limited per address by RATE_LIMIT_AUTH;
 * the provider's valid logouts never use up that limit; a token without `exp` or a body too large
 * is refused. Each scenario posts from its own address (X-Forwarded-For from the loopback proxy),
 * as separate machines would. The provider's logouts themselves: test/auth/session-ends.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { RefusalTally } from '../../admin/oidc/refusal-tally.js';
import { createLogger } from '../../shared/logger.js';
import { CLIENT_ID, startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { signIn } from '../support/sessions.js';

const LOGOUT_EVENT = { 'http://schemas.openid.net/event/backchannel-logout': {} };
/** RATE_LIMIT_AUTH's points per address: refused calls each take one. */
const AUTH_POINTS = 5;

let env: GatewayWithProvider;
/** The gateway's log lines (info and up), parsed, in order. */
const logged: Array<{ msg: string; refused?: number; reasons?: Record<string, number> }> = [];
/** Every log line as written, to check that no token reaches it. */
let logText = '';

before(async () => {
  env = await startGatewayWithProvider(
    { RATE_LIMIT_AUTH: `${AUTH_POINTS}/15m`, TRUST_PROXY: 'loopback', LOG_LEVEL: 'info' },
    { backchannelLogout: true },
    '127.0.0.1',
    (line) => {
      logText += line;
      logged.push(JSON.parse(line) as (typeof logged)[number]);
    },
  );
});

after(async () => {
  await env?.close();
});

interface Answer {
  status: number;
  text: string;
  retryAfter: unknown;
}

/** Posts `body` as a form from `address` (the client address the gateway believes from its loopback proxy). */
async function post(address: string, body: string): Promise<Answer> {
  const response = await request(`${env.gw.origin}/auth/backchannel-logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
    body,
  });
  return { status: response.statusCode, text: await response.body.text(), retryAfter: response.headers['retry-after'] };
}

/** A logout token the provider signs for `sub`, with an `exp` two minutes on unless `extra` removes it (undefined). */
async function logoutToken(sub: string, extra: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: env.idp.issuer, aud: CLIENT_ID, iat: now, exp: now + 120, jti: randomBytes(12).toString('hex'), sub, events: LOGOUT_EVENT, ...extra };
  return env.idp.signLogoutToken(Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined)));
}

/** A session of `sub` (made in the store) and the status `/auth/profile` answers it. */
async function sessionOf(sub: string): Promise<() => Promise<number>> {
  const { cookie } = await signIn(env.gw, { sub, email: `${sub}@example.com`, isAdmin: false });
  return async () => {
    const response = await request(`${env.gw.origin}/auth/profile`, { headers: { cookie } });
    await response.body.dump();
    return response.statusCode;
  };
}

const refusalLines = () => logged.filter((line) => line.msg.startsWith('back-channel logout: refused'));

describe('junk posted in a loop', () => {
  it('12 junk posts: 400 until the address has used RATE_LIMIT_AUTH, then 429 unread; one log line, no token in it', async () => {
    const junk = 'logout_token=junk.junk.junk';
    const statuses: number[] = [];
    for (let n = 0; n < 12; n++) statuses.push((await post('203.0.113.7', junk)).status);
    assert.deepEqual(statuses, [...Array(AUTH_POINTS).fill(400), ...Array(12 - AUTH_POINTS).fill(429)]);
    const over = await post('203.0.113.7', `logout_token=${'a'.repeat(1_000_000)}`);
    assert.equal(over.status, 429, 'refused before its body is read (not 413)');
    assert.ok(Number(over.retryAfter) > 0, 'Retry-After');
    assert.deepEqual(
      refusalLines().map(({ msg, refused, reasons }) => ({ msg, refused, reasons })),
      [{ msg: 'back-channel logout: refused 1 request in the last minute', refused: 1, reasons: { 'logout token: the header is not base64url JSON': 1 } }],
    );
    assert.ok(!logText.includes('junk'), 'the posted token is not logged');
    assert.equal((await post('203.0.113.8', junk)).status, 400, 'another address is not limited by it');
  });
});

describe("the provider's valid logouts", () => {
  it('are never counted: 12 in a row from an address that also had 4 refusals all end their sessions', async () => {
    const provider = '198.51.100.2';
    for (let n = 0; n < AUTH_POINTS - 1; n++) assert.equal((await post(provider, 'logout_token=not-a-jwt')).status, 400);
    for (let n = 0; n < 12; n++) {
      const profile = await sessionOf(`leaver-${n}`);
      assert.equal(await profile(), 200);
      const answer = await post(provider, `logout_token=${await logoutToken(`leaver-${n}`)}`);
      assert.equal(answer.status, 200, `logout ${n}: ${answer.text}`);
      assert.equal(await profile(), 401, `logout ${n} ended the session`);
    }
    assert.equal((await post(provider, 'logout_token=not-a-jwt')).status, 400, 'the last point left');
    assert.equal((await post(provider, 'logout_token=not-a-jwt')).status, 429);
    // An address over the limit is refused before anything is read, its valid logouts too (until the window ends).
    assert.equal((await post(provider, `logout_token=${await logoutToken('leaver-late')}`)).status, 429);
  });
});

describe('tokens and bodies the endpoint refuses', () => {
  it('a logout token without exp is refused (Back-Channel Logout 1.0 §2.4), ending nothing', async () => {
    const profile = await sessionOf('no-exp-victim');
    const answer = await post('198.51.100.3', `logout_token=${await logoutToken('no-exp-victim', { exp: undefined })}`);
    assert.deepEqual([answer.status, answer.text], [400, '{"error":"invalid_request"}']);
    assert.equal(await profile(), 200, 'the session lives on');
    assert.equal((await post('198.51.100.3', `logout_token=${await logoutToken('no-exp-victim')}`)).status, 200);
    assert.equal(await profile(), 401);
  });

  it('a body over 8 KiB is refused with 413 and counts as a refusal', async () => {
    const statuses: number[] = [];
    for (let n = 0; n <= AUTH_POINTS; n++) statuses.push((await post('198.51.100.4', `logout_token=${'a'.repeat(20 * 1024)}`)).status);
    assert.deepEqual(statuses, [...Array(AUTH_POINTS).fill(413), 429]);
  });
});

describe('the tally of refusals (admin/oidc/refusal-tally.ts)', () => {
  it('writes the first refusal at once, then one line per interval with the counts per reason', async () => {
    const lines: Array<{ msg: string; refused: number; reasons: Record<string, number> }> = [];
    let next: (() => void) | undefined;
    const logger = createLogger('warn', 'test', {
      write: (line: string) => {
        lines.push(JSON.parse(line) as (typeof lines)[number]);
        next?.();
      },
    });
    const tally = new RefusalTally(logger, 'back-channel logout', 200);
    const secondLine = new Promise<void>((resolve) => (next = () => lines.length === 2 && resolve()));
    tally.refused('no logout_token');
    for (const reason of ['not a form body', 'no logout_token', 'not a form body', 'not a form body']) tally.refused(reason);
    assert.equal(lines.length, 1, 'one line within the interval');
    await secondLine;
    assert.deepEqual(
      lines.map(({ msg, refused, reasons }) => ({ msg, refused, reasons })),
      [
        { msg: 'back-channel logout: refused 1 request in the last minute', refused: 1, reasons: { 'no logout_token': 1 } },
        { msg: 'back-channel logout: refused 4 requests in the last minute', refused: 4, reasons: { 'not a form body': 3, 'no logout_token': 1 } },
      ],
    );
  });
});
