/**
 * `POST /auth/backchannel-logout` tried as an attacker would (README "Back-channel logout",
 * design.md §4.12), against the real provider's keys, in both topologies: a running embedded
 * gateway, and the split one (Redis, the admin process and two proxy processes), where the
 * RATE_LIMIT_AUTH limiter is Redis's and each post reaches the admin process through a proxy's
 * hand-off (the posts alternate between the two proxies, so an address's points are one count
 * whichever proxy it comes through). Junk posted in a loop writes one log line a minute, not one
 * per post, and is limited per address by RATE_LIMIT_AUTH; the provider's valid logouts never use
 * up that limit; a token without `exp` or a body too large is refused. Each scenario posts from
 * its own address (X-Forwarded-For from the loopback proxy), as separate machines would. The
 * provider's logouts themselves: test/auth/session-ends.test.ts, test/split/split-session-ends.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client, request } from 'undici';
import { RefusalTally } from '../../admin/oidc/refusal-tally.js';
import { createLogger } from '../../shared/logger.js';
import type { SessionUser } from '../../shared/types.js';
import { CLIENT_ID, startGatewayWithProvider } from '../support/gateway-with-provider.js';
import type { IdentityProvider } from '../support/identity-provider.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { startSplitGateway } from '../support/split-gateway.js';

const LOGOUT_EVENT = { 'http://schemas.openid.net/event/backchannel-logout': {} };
/** RATE_LIMIT_AUTH's points per address: refused calls each take one. */
const AUTH_POINTS = 5;
/** The settings of the gateway's process(es) in either topology. */
const SETTINGS = { RATE_LIMIT_AUTH: `${AUTH_POINTS}/15m`, TRUST_PROXY: 'loopback', LOG_LEVEL: 'info' };
/** The address of the valid logouts `logSettled` posts (never refused, so never limited). */
const SETTLING_ADDRESS = '192.0.2.250';

type Topology = 'embedded' | 'split';

/** A log line of the gateway (of the admin process in split mode), parsed. */
interface LogLine {
  msg: string;
  refused?: number;
  reasons?: Record<string, number>;
}

/** What a scenario needs of a running gateway, whichever its topology. */
interface Gateway {
  /** Where requests go: the gateway's public origin; in split mode both proxies', to be taken in turn. */
  origins: string[];
  idp: IdentityProvider;
  /** The gateway's OIDC_CLIENT_ID (a logout token's `aud`). */
  clientId: string;
  /** A session made straight in the session store (SQLite's, or Redis's in split mode). */
  signIn(user: Partial<SessionUser>): Promise<SignedIn>;
  /** The log lines (info and up) that the gateway has written so far, in order, parsed. */
  readonly logged: readonly LogLine[];
  /** Everything the gateway's processes logged so far, as written (to check that no token reaches it). */
  logText(): string;
  /** Resolves once a line `match` accepts is logged (at once if one already has been, from the `from`th line on). */
  lineLogged(match: (line: LogLine) => boolean, from: number): Promise<void>;
  close(): Promise<void>;
}

/** Collects JSON log lines, from a writer's lines or a child's stdout chunks, and wakes whoever waits on one. */
class LogLines {
  readonly lines: LogLine[] = [];
  text = '';
  #partial = '';
  #waiters: Array<() => void> = [];

  /** One whole line, as pino writes it (embedded: the logger's destination). */
  line(raw: string): void {
    this.text += raw;
    const trimmed = raw.trim();
    if (trimmed.startsWith('{')) this.lines.push(JSON.parse(trimmed) as LogLine);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** A chunk of a child's output (split: the admin process's stdout), cut into lines. */
  chunk(data: string): void {
    const parts = (this.#partial + data).split('\n');
    this.#partial = parts.pop()!;
    for (const part of parts) this.line(`${part}\n`);
  }

  /** Resolves once a line from the `from`th on matches; rejects after `timeoutMs` without one. */
  async waitFor(match: (line: LogLine) => boolean, from: number, timeoutMs = 10_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no such log line within ${timeoutMs} ms; logged: ${JSON.stringify(this.lines.slice(from))}`)), timeoutMs);
    });
    try {
      while (!this.lines.slice(from).some(match)) await Promise.race([new Promise<void>((resolve) => this.#waiters.push(resolve)), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }
}

async function startEmbedded(): Promise<Gateway> {
  const log = new LogLines();
  const env = await startGatewayWithProvider(SETTINGS, { backchannelLogout: true }, '127.0.0.1', (line) => log.line(line));
  return {
    origins: [env.gw.origin],
    idp: env.idp,
    clientId: CLIENT_ID,
    signIn: (user) => signIn(env.gw, user),
    logged: log.lines,
    logText: () => log.text,
    lineLogged: (match, from) => log.waitFor(match, from),
    close: () => env.close(),
  };
}

async function startSplit(): Promise<Gateway> {
  const split = await startSplitGateway(SETTINGS, { backchannelLogout: true });
  const log = new LogLines();
  // From here on, the admin process's lines; what it wrote while starting (up to the last line end) is not needed.
  const output = split.admin.output();
  log.chunk(output.slice(output.lastIndexOf('\n') + 1));
  split.admin.child.stdout!.on('data', (chunk) => log.chunk(String(chunk)));
  return {
    origins: split.proxies.map((proxy) => proxy.url),
    idp: split.idp,
    clientId: split.env.OIDC_CLIENT_ID!,
    signIn: (user) => split.signIn(user),
    logged: log.lines,
    logText: () => [log.text, ...split.proxies.map((proxy) => proxy.process.output())].join(''),
    lineLogged: (match, from) => log.waitFor(match, from),
    close: () => split.close(),
  };
}

interface Answer {
  status: number;
  text: string;
  retryAfter: unknown;
}

/** At most this long for any answer: a request left without one fails its test instead of waiting out undici's 300 s. */
const ANSWER_TIMEOUT_MS = 10_000;

/** What became of a connection after its answer: the next request's status, closed by the gateway, or neither (hung). */
type Afterwards = number | 'closed' | 'hung';

/** How long a {@link PartlySentPost} waits for what it waits for before failing (an answer) or calling it `hung`. */
const PART_WAIT_MS = 5_000;

/**
 * A form post to `/auth/backchannel-logout` on a connection of its own, written by hand: its head
 * announces a body of `bodyBytes` bytes, of which only `logout_token=` is sent until {@link rest}.
 * So an answer that comes first ({@link answer}) was given before the body was read, and
 * {@link rest} shows what became of the connection after such an answer.
 */
class PartlySentPost {
  static readonly #START = 'logout_token=';
  readonly #socket: Socket;
  readonly #bodyBytes: number;
  readonly #host: string;
  #received = '';
  #closed = false;
  /** Called on every chunk received and on close: wakes {@link #until}. */
  #wake: (() => void) | undefined;

  private constructor(socket: Socket, host: string, bodyBytes: number) {
    this.#socket = socket;
    this.#host = host;
    this.#bodyBytes = bodyBytes;
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      this.#received += chunk;
      this.#wake?.();
    });
    socket.on('error', () => undefined); // a reset: 'close' follows
    socket.once('close', () => {
      this.#closed = true;
      this.#wake?.();
    });
  }

  /** Connects to `origin` and sends the head (from `address`) and the body's first bytes. */
  static async start(origin: string, address: string, bodyBytes: number): Promise<PartlySentPost> {
    const { hostname, port } = new URL(origin);
    const socket = connect(Number(port), hostname);
    await once(socket, 'connect');
    const post = new PartlySentPost(socket, `${hostname}:${port}`, bodyBytes);
    socket.write(post.#head(['POST /auth/backchannel-logout HTTP/1.1', 'Content-Type: application/x-www-form-urlencoded', `X-Forwarded-For: ${address}`, `Content-Length: ${bodyBytes}`]) + PartlySentPost.#START);
    return post;
  }

  /**
   * The status of the answer, once it has come whole, while the rest of the body is unsent.
   * @throws when none has come within 5 s, or the connection closed first.
   */
  async answer(): Promise<number> {
    const came = await this.#until(() => this.#firstEnd() !== undefined || this.#closed);
    if (this.#firstEnd() === undefined) {
      const what = came ? 'the connection closed before a whole answer' : `no answer within ${PART_WAIT_MS} ms while the body was unsent`;
      throw new Error(`${what}: ${JSON.stringify(this.#received)}`);
    }
    return Number(/^HTTP\/1\.1 (\d{3}) /.exec(this.#received)![1]);
  }

  /**
   * After {@link answer}: sends the rest of the body and a second request (`GET /auth/profile`, no
   * session) on the same connection; resolves with the second answer's status, `closed` when the
   * gateway closed the connection, or `hung` when neither happened within 5 s.
   */
  async rest(): Promise<Afterwards> {
    const end = this.#firstEnd()!;
    const second = () => /^HTTP\/1\.1 (\d{3}) /.exec(this.#received.slice(end))?.[1];
    this.#socket.write('a'.repeat(this.#bodyBytes - PartlySentPost.#START.length));
    this.#socket.write(this.#head(['GET /auth/profile HTTP/1.1']));
    await this.#until(() => second() !== undefined || this.#closed);
    const status = second();
    return status !== undefined ? Number(status) : this.#closed ? 'closed' : 'hung';
  }

  close(): void {
    this.#socket.destroy();
  }

  /** Resolves true once `holds` (checked on every chunk and on close), false after 5 s without. */
  async #until(holds: () => boolean): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PART_WAIT_MS)));
    try {
      while (!holds()) if (!(await Promise.race([new Promise<true>((resolve) => (this.#wake = () => resolve(true))), late]))) return false;
      return true;
    } finally {
      clearTimeout(timer);
      this.#wake = undefined;
    }
  }

  #head(lines: string[]): string {
    return `${[lines[0], `Host: ${this.#host}`, ...lines.slice(1)].join('\r\n')}\r\n\r\n`;
  }

  /** Where the first answer ends in what was received, once it is whole (by its Content-Length). */
  #firstEnd(): number | undefined {
    const headEnd = this.#received.indexOf('\r\n\r\n');
    if (headEnd < 0) return undefined;
    const length = /\r\ncontent-length: *(\d+)/i.exec(this.#received.slice(0, headEnd));
    assert.ok(length, `an answer with Content-Length: ${JSON.stringify(this.#received.slice(0, headEnd))}`);
    const end = headEnd + 4 + Number(length[1]);
    return this.#received.length >= end ? end : undefined;
  }
}

/** The scenarios, against the gateway `topology` names, started (and stopped) by the calling `describe`'s hooks. */
function scenarios(topology: Topology): void {
  let gateway: Gateway;
  /** Requests made so far, to take the origins in turn. */
  let requests = 0;

  before(async () => {
    gateway = topology === 'split' ? await startSplit() : await startEmbedded();
  });

  after(async () => {
    await gateway?.close();
  });

  /** The origin of the next request: in split mode, each proxy in turn. */
  const origin = () => gateway.origins[requests++ % gateway.origins.length]!;

  /**
   * Posts `body` as a form from `address` (the client address the gateway believes from its loopback
   * proxy); with `ownConnection`, on a connection of its own, closed after (see the connection scenario).
   */
  async function post(address: string, body: string, ownConnection = false): Promise<Answer> {
    const base = origin();
    const dispatcher = ownConnection ? new Client(base) : undefined;
    try {
      const response = await request(`${base}/auth/backchannel-logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': address },
        body,
        headersTimeout: ANSWER_TIMEOUT_MS,
        bodyTimeout: ANSWER_TIMEOUT_MS,
        ...(dispatcher ? { dispatcher } : {}),
      });
      return { status: response.statusCode, text: await response.body.text(), retryAfter: response.headers['retry-after'] };
    } finally {
      await dispatcher?.destroy();
    }
  }

  /** A logout token the provider signs for `sub`, with an `exp` two minutes on unless `extra` removes it (undefined). */
  async function logoutToken(sub: string, extra: Record<string, unknown> = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: gateway.idp.issuer, aud: gateway.clientId, iat: now, exp: now + 120, jti: randomBytes(12).toString('hex'), sub, events: LOGOUT_EVENT, ...extra };
    return gateway.idp.signLogoutToken(Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined)));
  }

  /** A session of `sub` (made in the store) and the status `/auth/profile` answers it. */
  async function sessionOf(sub: string): Promise<() => Promise<number>> {
    const { cookie } = await gateway.signIn({ sub, email: `${sub}@example.com`, isAdmin: false });
    return async () => {
      const response = await request(`${origin()}/auth/profile`, { headers: { cookie }, headersTimeout: ANSWER_TIMEOUT_MS, bodyTimeout: ANSWER_TIMEOUT_MS });
      await response.body.dump();
      return response.statusCode;
    };
  }

  /**
   * Resolves once every line the gateway logged for the requests made so far has been read: posts a
   * valid logout (of nobody) and waits for its own line, which comes after theirs. Immediate with the
   * embedded gateway's logger; in split mode the admin process's output comes through a pipe, later
   * than its answers.
   */
  async function logSettled(): Promise<void> {
    const from = gateway.logged.length;
    const answer = await post(SETTLING_ADDRESS, `logout_token=${await logoutToken(`nobody-${randomBytes(6).toString('hex')}`)}`);
    assert.equal(answer.status, 200, answer.text);
    await gateway.lineLogged((line) => line.msg === 'back-channel logout', from);
  }

  const refusalLines = () => gateway.logged.filter((line) => line.msg.startsWith('back-channel logout: refused'));

  describe('junk posted in a loop', () => {
    it('12 junk posts: 400 until the address has used RATE_LIMIT_AUTH, then 429 unread; one log line, no token in it', async () => {
      const junk = 'logout_token=junk.junk.junk';
      const statuses: number[] = [];
      for (let n = 0; n < 12; n++) statuses.push((await post('203.0.113.7', junk)).status);
      assert.deepEqual(statuses, [...Array(AUTH_POINTS).fill(400), ...Array(12 - AUTH_POINTS).fill(429)]);
      // On a connection of its own: in split mode the connection of a body refused unread is left hanging (see 'a body refused unread').
      const over = await post('203.0.113.7', `logout_token=${'a'.repeat(1_000_000)}`, true);
      assert.equal(over.status, 429, 'refused before its body is read (not 413)');
      assert.ok(Number(over.retryAfter) > 0, 'Retry-After');
      await logSettled();
      assert.deepEqual(
        refusalLines().map(({ msg, refused, reasons }) => ({ msg, refused, reasons })),
        [{ msg: 'back-channel logout: refused 1 request in the last minute', refused: 1, reasons: { 'logout token: the header is not base64url JSON': 1 } }],
      );
      assert.ok(!gateway.logText().includes('junk'), 'the posted token is not logged');
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

  describe('a body refused unread', () => {
    /** `address` over the limit (RATE_LIMIT_AUTH's points used up by junk, then one more), and a post of `bodyBytes` started from it. */
    async function overLimitPost(address: string, bodyBytes: number): Promise<PartlySentPost> {
      const statuses: number[] = [];
      for (let n = 0; n <= AUTH_POINTS; n++) statuses.push((await post(address, 'logout_token=junk')).status);
      assert.deepEqual(statuses, [...Array(AUTH_POINTS).fill(400), 429]);
      return PartlySentPost.start(origin(), address, bodyBytes);
    }

    // 4 KiB: under the 8 KiB bound, so that only the limit can answer before the body has come (a
    // larger Content-Length is refused unread as too large, over the limit or not).
    it('is answered 429 before its body is sent', async () => {
      const partly = await overLimitPost('198.51.100.5', 4 * 1024);
      try {
        assert.equal(await partly.answer(), 429);
      } finally {
        partly.close();
      }
    });

    it(
      'leaves its connection able to take the next request, or closes it, once the rest is sent',
      async () => {
        // 1 MB: more than a connection delivers in one read, so that some of the rest comes after the answer.
        const partly = await overLimitPost('198.51.100.6', 1_000_000);
        try {
          assert.equal(await partly.answer(), 429);
          const afterwards = await partly.rest();
          assert.ok(afterwards === 401 || afterwards === 'closed', `the connection after the 429: ${afterwards} (401 expected for /auth/profile, or closed)`);
        } finally {
          partly.close();
        }
      },
    );
  });
}

describe('an embedded gateway', () => scenarios('embedded'));

describe('the split topology (Redis, the admin process, two proxy processes)', () => scenarios('split'));

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
    // The tally's timer is unref'd: this one (ref'd) keeps the event loop alive until the second line, and fails the test without it.
    let guard: NodeJS.Timeout | undefined;
    const secondLine = new Promise<void>((resolve, reject) => {
      next = () => lines.length === 2 && resolve();
      guard = setTimeout(() => reject(new Error(`no second line within 5 s: ${JSON.stringify(lines)}`)), 5_000);
    }).finally(() => clearTimeout(guard));
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
