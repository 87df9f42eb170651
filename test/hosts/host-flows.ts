/**
 * The steps of one sign-in across hosts (design.md §4.16) as a browser takes them, for the suites
 * of this folder: signing in on a service host through the provider, handing a live sign-in to
 * another host, and what a user then sees there.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { browse } from '../support/browserless-login.js';
import { browserRequest, type BrowserResponse } from '../support/browser-request.js';
import type { HostSignInGateway } from '../support/host-sign-in-gateways.js';
import type { DemoUser } from '../support/identity-provider.js';
import type { RecordingCookieJar } from '../support/recording-cookie-jar.js';
import type { Echo } from '../support/upstream.js';

/** The `bind` a service host sends with its `gw_handoff` value: base64url SHA-256, unpadded. */
export function bindOf(handoff: string): string {
  return createHash('sha256').update(handoff).digest('base64url');
}

/** A code of 256 random bits, base64url: 43 characters. */
export const CODE = /^[A-Za-z0-9_-]{43}$/;

/** What the echo upstream answered through the gateway (asserts a 200). */
export function echoOf(response: BrowserResponse): Echo {
  assert.equal(response.status, 200, response.body);
  return JSON.parse(response.body) as Echo;
}

/** A `DemoUser` of the provider named `name`. */
export function account(name: string): DemoUser {
  return { sub: `${name}-sub`, email: `${name}@example.com`, name, password: `${name}-password`, groups: [] };
}

/**
 * Opens `url` (a protected page on a service host) in the browser holding `jar`, signs in as
 * `user` at the provider and follows the hand-off back: resolves with the page the upstream
 * answered, once the walk ended at the host's `/.gatehouse/callback` with a redirect.
 */
export async function signInAt(jar: RecordingCookieJar, url: string, user: DemoUser): Promise<{ callbackUrl: string; page: BrowserResponse }> {
  const origin = new URL(url).origin;
  const walked = await browse(url, jar, { email: user.email, password: user.password }, origin);
  assert.equal(walked.status, 302, `the walk from ${url} ended at ${walked.url} with ${walked.status}: ${walked.body.slice(0, 300)}`);
  assert.ok(walked.url.startsWith(`${origin}/.gatehouse/callback?code=`), walked.url);
  const back = new URL(walked.finalLocation!, walked.url).href;
  return { callbackUrl: walked.url, page: await browserRequest(jar, back, { initiator: walked.url }) };
}

/**
 * Opens `url` on a service host in a browser whose sign-in origin session is live: follows the
 * redirects (no provider pages are filled) and resolves with the requests made and the page.
 */
export async function openSignedIn(gw: HostSignInGateway, jar: RecordingCookieJar, url: string): Promise<{ hops: string[]; page: BrowserResponse }> {
  const mark = gw.network.requests.length;
  const walked = await browse(url, jar, undefined, new URL(url).origin);
  const hops = gw.network.requests.slice(mark);
  assert.equal(walked.status, 302, `the walk from ${url} ended at ${walked.url} with ${walked.status}: ${walked.body.slice(0, 300)}`);
  const back = new URL(walked.finalLocation!, walked.url).href;
  return { hops, page: await browserRequest(jar, back, { initiator: walked.url }) };
}

/** A hand-off code minted for a browser, not yet redeemed. */
export interface HandedOff {
  /** `<host origin>/.gatehouse/callback?code=…` */
  callbackUrl: string;
  code: string;
  /** The browser's `gw_handoff` value the code is bound to. */
  handoff: string;
}

/**
 * Makes the sign-in origin mint a code for `origin` (a service host) in the browser holding
 * `jar`, which must have a live sign-in origin session and none on that host: opens `path` there,
 * follows to `/auth/login`, and stops at its redirect to the host's callback (asserted to come at
 * once, without the provider).
 */
export async function handOff(gw: HostSignInGateway, jar: RecordingCookieJar, origin: string, path = '/'): Promise<HandedOff> {
  const asked = await browserRequest(jar, `${origin}${path}`);
  assert.equal(asked.status, 302, asked.body);
  const login = new URL(asked.location!);
  assert.equal(`${login.origin}${login.pathname}`, `${gw.publicUrl}/auth/login`);
  const handoff = jar.get('gw_handoff', origin);
  assert.ok(handoff, 'the host set gw_handoff');
  const minted = await browserRequest(jar, login.href, { initiator: `${origin}${path}` });
  assert.equal(minted.status, 302, minted.body);
  const callback = new URL(minted.location!);
  assert.equal(`${callback.origin}${callback.pathname}`, `${origin}/.gatehouse/callback`, 'straight back to the host');
  const code = callback.searchParams.get('code') ?? '';
  assert.match(code, CODE);
  return { callbackUrl: callback.href, code, handoff };
}

/** Asserts a refused redemption: 400, no cookie set, and the page says the link expired or was used. */
export function assertRefusedCode(response: BrowserResponse, what: string): void {
  assert.equal(response.status, 400, `${what}: ${response.body.slice(0, 300)}`);
  assert.deepEqual(response.setCookies, [], `${what}: no cookie is set`);
  assert.equal(response.headers.location, undefined, what);
  assert.match(response.body, /expired|used/i, what);
}
