/**
 * A tiny OpenID Connect relying party built on openid-client v6, used only to prove the test identity
 * provider and the browserless login driver work end to end (before and independently of the
 * gateway's own relying party).
 *
 *   GET  /login        302 to the provider: code flow, PKCE S256, state, nonce, the chosen response mode
 *   GET|POST /callback authorization code grant (OIDC Core 1.0 §3.1.3); 302 to /welcome, or 400 + error code
 *   GET  /logout       302 to the end_session_endpoint with id_token_hint and post_logout_redirect_uri
 *   GET  /logged-out   200 "logged out"
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as client from 'openid-client';
import { closeServer, listen } from './listen.js';

export interface RelyingPartyOptions {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  responseMode: 'form_post' | 'query';
  /** Verify the ID token's signature against the issuer's JWKS (openid-client `enableNonRepudiationChecks`). */
  nonRepudiation?: boolean;
}

/** One callback: `method` is GET (query response mode) or POST (form_post). */
export type CallbackResult =
  | { ok: true; method: string; claims: client.IDToken; idToken: string }
  | { ok: false; method: string; error: unknown };

export interface TestRelyingParty {
  /** e.g. http://127.0.0.1:PORT or http://localhost:PORT */
  url: string;
  callbackUrl: string;
  loggedOutUrl: string;
  /** One entry per callback, oldest first. */
  results: CallbackResult[];
  /** Discovers the provider; call after the provider (which must know `callbackUrl`) has started. */
  connect(opts: RelyingPartyOptions): Promise<void>;
  close(): Promise<void>;
}

interface Transaction { verifier: string; nonce: string }

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function reply(res: ServerResponse, status: number, text: string, location?: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...(location ? { location } : {}) });
  res.end(text);
}

function errorCode(err: unknown): string {
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string') return err.code;
  return err instanceof Error ? err.name : 'unknown';
}

/**
 * Starts the relying party on a free port of 127.0.0.1. `hostname` is the name in its URLs (default
 * `127.0.0.1`; `localhost` makes it cross-site to a provider on 127.0.0.1).
 */
export async function startTestRelyingParty(opts: { hostname?: string } = {}): Promise<TestRelyingParty> {
  const server = createServer();
  const port = await listen(server, 0, '127.0.0.1');
  const url = `http://${opts.hostname ?? '127.0.0.1'}:${port}`;
  const transactions = new Map<string, Transaction>();
  const results: CallbackResult[] = [];
  let config: client.Configuration | undefined;
  let options: RelyingPartyOptions | undefined;
  let lastIdToken: string | undefined;

  async function login(res: ServerResponse, cfg: client.Configuration, opts: RelyingPartyOptions): Promise<void> {
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    transactions.set(state, { verifier, nonce });
    const target = client.buildAuthorizationUrl(cfg, {
      redirect_uri: `${url}/callback`,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      response_mode: opts.responseMode,
    });
    reply(res, 302, '', target.href);
  }

  async function callback(req: IncomingMessage, res: ServerResponse, cfg: client.Configuration): Promise<void> {
    const current = new URL(req.url ?? '/', url);
    let input: URL | Request = current;
    let params = current.searchParams;
    if (req.method === 'POST') {
      const body = await readBody(req);
      params = new URLSearchParams(body);
      const headers = { 'content-type': String(req.headers['content-type'] ?? '') };
      input = new Request(current.href, { method: 'POST', headers, body });
    }
    const state = params.get('state') ?? '';
    const tx = transactions.get(state);
    transactions.delete(state);
    try {
      if (tx === undefined) throw Object.assign(new Error('unknown state'), { code: 'RP_UNKNOWN_STATE' });
      const tokens = await client.authorizationCodeGrant(cfg, input, {
        pkceCodeVerifier: tx.verifier,
        expectedState: state,
        expectedNonce: tx.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (claims === undefined || tokens.id_token === undefined) throw new Error('no ID token');
      lastIdToken = tokens.id_token;
      results.push({ ok: true, method: req.method ?? 'GET', claims, idToken: tokens.id_token });
      reply(res, 302, '', '/welcome');
    } catch (error) {
      results.push({ ok: false, method: req.method ?? 'GET', error });
      reply(res, 400, errorCode(error));
    }
  }

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', url).pathname;
    const handle = async (): Promise<void> => {
      if (config === undefined || options === undefined) return reply(res, 503, 'not connected');
      if (path === '/login') return login(res, config, options);
      if (path === '/callback') return callback(req, res, config);
      if (path === '/logout') {
        const params: Record<string, string> = { post_logout_redirect_uri: `${url}/logged-out` };
        if (lastIdToken !== undefined) params['id_token_hint'] = lastIdToken;
        return reply(res, 302, '', client.buildEndSessionUrl(config, params).href);
      }
      if (path === '/logged-out') return reply(res, 200, 'logged out');
      if (path === '/welcome') return reply(res, 200, 'welcome');
      return reply(res, 404, 'not found');
    };
    handle().catch((err: unknown) => reply(res, 500, String(err)));
  });

  return {
    url,
    callbackUrl: `${url}/callback`,
    loggedOutUrl: `${url}/logged-out`,
    results,
    async connect(opts) {
      const execute = [client.allowInsecureRequests, ...(opts.nonRepudiation ? [client.enableNonRepudiationChecks] : [])];
      const auth = opts.clientSecret === undefined ? client.None() : client.ClientSecretBasic(opts.clientSecret);
      config = await client.discovery(new URL(opts.issuer), opts.clientId, undefined, auth, { execute });
      options = opts;
    },
    close: () => closeServer(server),
  };
}
