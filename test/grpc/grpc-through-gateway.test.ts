/**
 * gRPC through the gateway (README "gRPC", design.md §4.13, §4.17) with real parts: @grpc/grpc-js
 * clients speaking HTTP/2 with prior knowledge to a gateway with `H2C=true`, a grpc-js server
 * behind it as an `h2c://` target, a real identity provider issuing the machine client's bearer
 * JWTs. Every call kind works through a protected service with a token; a failing method's status,
 * message and trailer reach the client; the gateway's own refusals are gRPC statuses: no token
 * UNAUTHENTICATED, a policy PERMISSION_DENIED, a target away UNAVAILABLE, a deadline shorter than
 * the target takes DEADLINE_EXCEEDED (`grpc-timeout` honoured below UPSTREAM_TIMEOUT). Over the
 * TLS listener, grpc-js negotiates h2 by ALPN and is served the same.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tokenFor, type MachineClient } from '../support/bearer-token-cases.js';
import { createService } from '../support/api-client.js';
import { freePort } from '../support/free-port.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { echoClient, grpc, grpcFrame, metadataOf, startGrpcTarget, unary, type Chunk, type EchoClient, type EchoReply, type GrpcTarget, type SumReply } from '../support/grpc-service.js';
import { signIn } from '../support/sessions.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { makeTestCa } from '../support/test-certificates.js';

const API = 'https://grpc.gatehouse.test';
const ROBOT = { clientId: 'grpc-robot', clientSecret: 'grpc-robot-secret' };

let env: GatewayWithProvider;
let target: GrpcTarget;
let token: string;
let address: string;
const clients: EchoClient[] = [];

/** A client of the Echo service as the gateway serves it under `prefix`. */
function through(prefix: string): EchoClient {
  const client = echoClient(address, { prefix });
  clients.push(client);
  return client;
}

/** The ServiceError a call that must fail rejects with. */
function failure(call: Promise<unknown>): Promise<grpc.ServiceError> {
  return call.then(
    () => assert.fail('the call succeeded'),
    (error: grpc.ServiceError) => error,
  );
}

before(async () => {
  target = await startGrpcTarget();
  env = await startGatewayWithProvider({ H2C: 'true', OIDC_API_AUDIENCES: API }, { machineClients: [ROBOT], apiResources: [API] });
  address = new URL(env.gw.origin).host;
  const admin = await signIn(env.gw);
  // A gRPC method path is /<service>/<method>: under a prefix, the target's base path puts the
  // service name back (/rpc/gatehouse.test.Echo/Unary → <target>/gatehouse.test.Echo/Unary).
  const service = (path: string, targetUrl: string, fields: Record<string, unknown> = {}) =>
    createService(env.gw.adminUrl, admin, { name: path, path, targetUrl, requireAuth: true, ...fields });
  await service('/rpc', target.url);
  await service('/rpc-policy', target.url, { access: { groups: [], emails: ['someone@example.com'], emailDomains: [], subjects: [] } });
  await service('/rpc-down', `h2c://127.0.0.1:${await freePort()}`);
  token = await tokenFor({ idp: env.idp, client: ROBOT, resource: API } satisfies MachineClient);
});

after(async () => {
  for (const client of clients) client.close();
  await env?.close();
  await target?.close();
});

describe('gRPC through a protected service, with a bearer JWT', () => {
  const auth = () => ({ authorization: `Bearer ${token}` });

  it('unary: the reply, the identity assertion and request id at the target, the token never', async () => {
    const reply = await unary<EchoReply>(through('/rpc'), 'Unary', { text: 'hello' }, { metadata: { ...auth(), 'x-echo': 'kept' } });
    assert.equal(reply.text, 'hello');
    assert.equal(reply.echo, 'kept');
    assert.ok(reply.seen.includes('x-gatehouse-assertion'), 'the target learns who called');
    assert.ok(reply.seen.includes('x-request-id'));
    assert.ok(!reply.seen.includes('authorization'), 'the bearer token stays at the gateway');
  });

  it("a failing method: its code, message and trailer reach the client", async () => {
    const error = await failure(unary(through('/rpc'), 'Fail', { code: grpc.status.ALREADY_EXISTS, message: 'twice' }, { metadata: auth() }));
    assert.equal(error.code, grpc.status.ALREADY_EXISTS);
    assert.equal(error.details, 'twice');
    assert.deepEqual(error.metadata.get('x-detail'), ['why']);
  });

  it('server streaming, client streaming and bidirectional calls', async () => {
    const client = through('/rpc');
    const chunks: Chunk[] = [];
    for await (const chunk of client.Count({ count: 500, size: 2_000 }, metadataOf(auth()))) chunks.push(chunk as Chunk);
    assert.equal(chunks.length, 500);

    const sum = await new Promise<SumReply>((resolve, reject) => {
      const call = client.Sum(metadataOf(auth()), (error, reply) => (error ? reject(error) : resolve(reply!)));
      for (let i = 0; i < 200; i++) call.write({ data: 'abcde' });
      call.end();
    });
    assert.deepEqual(sum, { messages: 200, bytes: 1_000 });

    const chat = client.Chat(metadataOf(auth()));
    const replies: string[] = [];
    chat.on('data', (reply: EchoReply) => {
      replies.push(reply.text);
      if (replies.length < 5) chat.write({ text: `m${replies.length}` });
      else chat.end();
    });
    chat.write({ text: 'm0' });
    await new Promise((resolve, reject) => chat.on('end', resolve).on('error', reject));
    assert.deepEqual(replies, ['m0', 'm1', 'm2', 'm3', 'm4'], 'each message answered before the next was sent: both directions stream');
  });
});

describe("the gateway's refusals, as gRPC statuses", () => {
  it('no token: UNAUTHENTICATED, and the target never hears of the call', async () => {
    const before = target.calls.get('Unary') ?? 0;
    const error = await failure(unary(through('/rpc'), 'Unary', { text: 'x' }));
    assert.equal(error.code, grpc.status.UNAUTHENTICATED);
    assert.equal(error.details, 'Not authenticated');
    assert.equal(target.calls.get('Unary') ?? 0, before);
  });

  it('a token the gateway refuses: UNAUTHENTICATED', async () => {
    const error = await failure(unary(through('/rpc'), 'Unary', { text: 'x' }, { metadata: { authorization: 'Bearer not-a-jwt' } }));
    assert.equal(error.code, grpc.status.UNAUTHENTICATED);
  });

  it("a service whose policy does not name the caller: PERMISSION_DENIED", async () => {
    const error = await failure(unary(through('/rpc-policy'), 'Unary', { text: 'x' }, { metadata: { authorization: `Bearer ${token}` } }));
    assert.equal(error.code, grpc.status.PERMISSION_DENIED);
  });

  it('a target that is not there: UNAVAILABLE', async () => {
    const error = await failure(unary(through('/rpc-down'), 'Unary', { text: 'x' }, { metadata: { authorization: `Bearer ${token}` } }));
    assert.equal(error.code, grpc.status.UNAVAILABLE);
  });

  it('a deadline shorter than the target takes: DEADLINE_EXCEEDED', async () => {
    const error = await failure(unary(through('/rpc'), 'Slow', { delayMs: 3_000 }, { deadlineMs: 300, metadata: { authorization: `Bearer ${token}` } }));
    assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED);
  });

  it("the gateway keeps a call's grpc-timeout itself: a client that does not is answered DEADLINE_EXCEEDED then, not after UPSTREAM_TIMEOUT", async () => {
    const session = await openSession(env.gw.origin);
    try {
      const started = Date.now();
      const headers = { ':method': 'POST', ':path': '/rpc/gatehouse.test.Echo/Slow', 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': '200m', authorization: `Bearer ${token}` };
      const answer = await http2Request(session, headers, grpcFrame({ delayMs: 5_000 }));
      assert.equal(answer.status, 200);
      assert.equal(answer.headers['grpc-status'], String(grpc.status.DEADLINE_EXCEEDED));
      assert.ok(Date.now() - started < 4_000, `answered after ${Date.now() - started} ms`);
    } finally {
      session.close();
    }
  });
});

describe('gRPC over the TLS listener (h2 by ALPN)', () => {
  let tls: GatewayWithProvider;
  let dir: string;
  let client: EchoClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-grpc-tls-'));
    const ca = makeTestCa(dir);
    const pair = ca.issue('gateway', ['localhost']);
    const port = await freePort();
    tls = await startGatewayWithProvider(
      { PORT: String(port), PUBLIC_URL: `https://localhost:${port}`, TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key, OIDC_API_AUDIENCES: API },
      { machineClients: [ROBOT], apiResources: [API] },
    );
    await createService(tls.gw.adminUrl, await signIn(tls.gw), { name: 'rpc', path: '/rpc', targetUrl: target.url, requireAuth: true });
    client = echoClient(`localhost:${port}`, { ca: ca.caFile, prefix: '/rpc' });
  });
  after(async () => {
    client?.close();
    await tls?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a unary call and a server stream with a bearer JWT; no token is UNAUTHENTICATED', async () => {
    const bearer = await tokenFor({ idp: tls.idp, client: ROBOT, resource: API });
    const reply = await unary<EchoReply>(client, 'Unary', { text: 'over tls' }, { metadata: { authorization: `Bearer ${bearer}` } });
    assert.equal(reply.text, 'over tls');
    let count = 0;
    for await (const chunk of client.Count({ count: 100, size: 100 }, metadataOf({ authorization: `Bearer ${bearer}` }))) count += (chunk as Chunk).data.length > 0 ? 1 : 0;
    assert.equal(count, 100);
    const error = await failure(unary(client, 'Unary', { text: 'x' }));
    assert.equal(error.code, grpc.status.UNAUTHENTICATED);
  });
});
