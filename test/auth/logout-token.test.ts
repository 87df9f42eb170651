import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import {
  CompactEncrypt,
  CompactSign,
  SignJWT,
  createLocalJWKSet,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  type CryptoKey,
  type JWTVerifyGetKey,
} from 'jose';
import { InvalidLogoutToken, verifyLogoutToken, type LogoutTokenCheck } from '../../admin/oidc/logout-token.js';

const ISSUER = 'https://idp.example.com/realms/main';
const CLIENT_ID = 'gatehouse';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
/** The tests' clock, epoch ms (a whole second, so the expected epoch seconds are exact). */
const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW = NOW_MS / 1000;

let signingKey: CryptoKey;
let otherKey: CryptoKey;
let publicSpki: string;
let keys: JWTVerifyGetKey;
let check: LogoutTokenCheck;

before(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  signingKey = pair.privateKey;
  publicSpki = await exportSPKI(pair.publicKey);
  otherKey = (await generateKeyPair('RS256')).privateKey;
  keys = createLocalJWKSet({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] });
  check = { issuer: ISSUER, clientId: CLIENT_ID, keys, now: () => NOW_MS };
});

/** A logout token's claims as a provider sends them (exp two minutes after iat, §2.4). */
function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const all: Record<string, unknown> = {
    iss: ISSUER,
    aud: CLIENT_ID,
    iat: NOW - 5,
    exp: NOW + 115,
    jti: 'jti-1',
    sid: 'sid-1',
    events: { [EVENT]: {} },
    ...overrides,
  };
  // An override of undefined removes the claim.
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined));
}

/** Signs `overrides` applied to {@link claims}; `header` is added to `{ alg: RS256, kid: k1, typ: logout+jwt }`. */
function sign(overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: CryptoKey | Uint8Array = signingKey): Promise<string> {
  const protectedHeader = Object.fromEntries(Object.entries({ alg: 'RS256', kid: 'k1', typ: 'logout+jwt', ...header }).filter(([, v]) => v !== undefined));
  return new SignJWT(claims(overrides)).setProtectedHeader(protectedHeader as { alg: string }).sign(key);
}

const base64url = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Asserts `token` is refused with a message matching `reason`, which never quotes the token. */
async function refused(token: string, reason: RegExp, options: Partial<LogoutTokenCheck> = {}): Promise<void> {
  await assert.rejects(verifyLogoutToken(token, { ...check, ...options }), (error: unknown) => {
    assert.ok(error instanceof InvalidLogoutToken, `not an InvalidLogoutToken: ${String(error)}`);
    assert.match(error.message, /^logout token: /);
    assert.match(error.message, reason);
    for (const part of token.split('.').filter((p) => p.length > 3)) assert.ok(!error.message.includes(part), 'the message quotes the token');
    return true;
  });
}

test('a token with sid only ends that provider session; rememberUntil is exp plus the tolerance', async () => {
  const result = await verifyLogoutToken(await sign(), check);
  assert.deepEqual(result, { sid: 'sid-1', jti: 'jti-1', rememberUntil: NOW + 115 + 60 });
});

test('a token with sub only ends all sessions of that user', async () => {
  const result = await verifyLogoutToken(await sign({ sid: undefined, sub: 'user-7' }), check);
  assert.deepEqual(result, { sub: 'user-7', jti: 'jti-1', rememberUntil: NOW + 115 + 60 });
});

test('a token without exp is refused (Back-Channel Logout 1.0 §2.4 requires it)', async () => {
  await refused(await sign({ exp: undefined }), /exp is missing/);
});

test('a token with both sub and sid carries both; aud may be an array holding the client id', async () => {
  const result = await verifyLogoutToken(await sign({ sub: 'user-7', aud: ['other', CLIENT_ID] }), check);
  assert.deepEqual(result, { sub: 'user-7', sid: 'sid-1', jti: 'jti-1', rememberUntil: NOW + 175 });
});

test('a far exp does not stretch rememberUntil past iat + max age + tolerance', async () => {
  const result = await verifyLogoutToken(await sign({ exp: NOW + 86_400 }), check);
  assert.equal(result.rememberUntil, NOW - 5 + 300 + 60);
});

test('a token is accepted until just before rememberUntil and refused from it on (exp-bound and iat-bound)', async () => {
  for (const overrides of [{}, { exp: NOW + 86_400 }]) {
    const token = await sign(overrides);
    const { rememberUntil } = await verifyLogoutToken(token, check);
    await verifyLogoutToken(token, { ...check, now: () => rememberUntil * 1000 - 1 });
    await refused(token, /exp has passed|iat is too old/, { now: () => rememberUntil * 1000 });
  }
});

test('typ logout+jwt (any case, with or without application/), JWT, and no typ are accepted', async () => {
  for (const typ of ['logout+jwt', 'LOGOUT+JWT', 'application/logout+jwt', 'JWT', 'application/jwt', undefined]) {
    const result = await verifyLogoutToken(await sign({}, { typ }), check);
    assert.equal(result.sid, 'sid-1', `typ ${typ}`);
  }
});

test('any other typ is refused', async () => {
  await refused(await sign({}, { typ: 'at+jwt' }), /typ is neither logout\+jwt nor JWT/);
  await refused(await sign({}, { typ: 'secevent+jwt' }), /typ is neither/);
});

test('a signature by another key under the same kid is refused', async () => {
  await refused(await sign({}, {}, otherKey), /signature does not verify/);
});

test('a kid the issuer does not have is refused', async () => {
  await refused(await sign({}, { kid: 'unknown' }), /no issuer key matches its kid and alg/);
});

test('alg none is refused', async () => {
  const token = `${base64url({ alg: 'none', typ: 'logout+jwt' })}.${base64url(claims())}.`;
  await refused(token, /alg none is refused/);
});

test('HS256 keyed with the public key (algorithm confusion) is refused', async () => {
  const token = await sign({}, { alg: 'HS256' }, new TextEncoder().encode(publicSpki));
  await refused(token, /alg is not an allowed asymmetric algorithm/);
});

test('an encrypted (5-part) token is refused', async () => {
  const { publicKey } = await generateKeyPair('RSA-OAEP-256');
  const inner = await sign();
  const token = await new CompactEncrypt(new TextEncoder().encode(inner)).setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'JWT' }).encrypt(publicKey);
  assert.equal(token.split('.').length, 5);
  await refused(token, /encrypted \(JWE\)/);
});

test('garbage is refused', async () => {
  await refused('', /not a compact JWS/);
  await refused('not a token', /not a compact JWS/);
  await refused('a.b', /not a compact JWS/);
  await refused('a.b.c.d', /not a compact JWS/);
  await refused('%%%.b.c', /header is not base64url JSON/);
  await refused(`${base64url('not json')}.e30.c2ln`, /header is not base64url JSON/);
  await refused(`${base64url([1])}.e30.c2ln`, /header is not base64url JSON/);
  await refused(`${base64url({ alg: 'RS256', kid: 'k1' })}.e30.!!!`, /not a well-formed JWS/);
  await refused(`${base64url({ alg: 'RS256', kid: 'k1', typ: 5 })}.e30.c2ln`, /typ is neither/);
});

test('claims that are not a JSON object are refused', async () => {
  const header = { alg: 'RS256', kid: 'k1', typ: 'logout+jwt' };
  const text = await new CompactSign(new TextEncoder().encode('not json')).setProtectedHeader(header).sign(signingKey);
  await refused(text, /claims are not JSON/);
  const array = await new CompactSign(new TextEncoder().encode('[1,2]')).setProtectedHeader(header).sign(signingKey);
  await refused(array, /claims are not a JSON object/);
});

test('a crit header is refused', async () => {
  const token = await new CompactSign(new TextEncoder().encode(JSON.stringify(claims())))
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', crit: ['exp-ext'], 'exp-ext': 1 })
    .sign(signingKey, { crit: { 'exp-ext': true } });
  await refused(token, /crit extensions are not supported/);
});

test('iss other than the issuer is refused', async () => {
  await refused(await sign({ iss: 'https://evil.example.com' }), /iss is not the issuer/);
  await refused(await sign({ iss: `${ISSUER}/` }), /iss is not the issuer/);
  await refused(await sign({ iss: undefined }), /iss is not the issuer/);
});

test('aud without the client id is refused', async () => {
  await refused(await sign({ aud: 'another-client' }), /aud does not contain the client id/);
  await refused(await sign({ aud: ['a', 'b'] }), /aud does not contain the client id/);
  await refused(await sign({ aud: undefined }), /aud does not contain the client id/);
});

test('an exp past the tolerance is refused; within it, accepted', async () => {
  await refused(await sign({ exp: NOW - 61 }), /exp has passed/);
  await refused(await sign({ exp: 'soon' }), /exp is not a number/);
  assert.equal((await verifyLogoutToken(await sign({ exp: NOW - 59 }), check)).jti, 'jti-1');
});

test('an iat in the future beyond the tolerance is refused; within it, accepted', async () => {
  await refused(await sign({ iat: NOW + 61 }), /iat is in the future/);
  assert.equal((await verifyLogoutToken(await sign({ iat: NOW + 59 }), check)).jti, 'jti-1');
});

test('an iat older than the max age (plus tolerance) is refused; the max age can be set', async () => {
  await refused(await sign({ iat: NOW - 361, exp: NOW + 86_400 }), /iat is too old/);
  assert.equal((await verifyLogoutToken(await sign({ iat: NOW - 359, exp: NOW + 86_400 }), check)).jti, 'jti-1');
  await refused(await sign({ iat: NOW - 100 }), /iat is too old/, { maxAgeSeconds: 30, clockToleranceSeconds: 10 });
});

test('a missing or non-numeric iat is refused', async () => {
  await refused(await sign({ iat: undefined }), /iat is missing/);
  await refused(await sign({ iat: String(NOW) }), /iat is not a number/);
});

test('a future nbf is refused', async () => {
  await refused(await sign({ nbf: NOW + 120 }), /nbf is in the future/);
});

test('events without the back-channel logout event is refused', async () => {
  await refused(await sign({ events: undefined }), /events does not hold the back-channel logout event/);
  await refused(await sign({ events: { 'https://schemas.openid.net/secevent/risc/event-type/sessions-revoked': {} } }), /events does not hold/);
  await refused(await sign({ events: [EVENT] }), /events does not hold/);
  await refused(await sign({ events: { [EVENT]: true } }), /back-channel logout event is not a JSON object/);
});

test('a token with neither sub nor sid, or an empty one, is refused', async () => {
  await refused(await sign({ sid: undefined }), /neither sub nor sid is present/);
  await refused(await sign({ sub: '' }), /sub is not a non-empty string/);
  await refused(await sign({ sid: 42 }), /sid is not a non-empty string/);
});

test('a nonce (an ID token posing as a logout token) is refused', async () => {
  await refused(await sign({ nonce: 'n-0S6_WzA2Mj' }), /nonce is present/);
});

test('a missing or empty jti is refused', async () => {
  await refused(await sign({ jti: undefined }), /jti is missing/);
  await refused(await sign({ jti: '' }), /jti is missing/);
});

test('a failure to get the keys is passed on, not called an invalid token', async () => {
  const unavailable = new Error('identity provider unavailable');
  const failing: JWTVerifyGetKey = async () => {
    throw unavailable;
  };
  await assert.rejects(verifyLogoutToken(await sign(), { ...check, keys: failing }), (error: unknown) => error === unavailable);
});
