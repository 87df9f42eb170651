import * as v from 'valibot';
import { GATEWAY_PREFIXES, isGatewayPath, isReservedPath, RESERVED_PREFIX } from '../../shared/http/gateway-paths.js';
import { MAX_HOST_NAME_LENGTH, readHostName } from '../../shared/services/host-names.js';
import { atMostChars } from '../http/char-length.js';

/**
 * The rules of a service's own fields (design.md §5): `name`, `path`, `description` and the
 * booleans; and what the pool's and the access policy's fields (pool-fields.ts,
 * access-policy-fields.ts) share with them. Valibot schemas, put together into the bodies'
 * schemas by service-validation.ts.
 */

/** Longest `path`, and a health check's path, in characters (design.md §5). */
export const MAX_PATH_LENGTH = 200;
/** Longest `name` after trimming, in characters (design.md §5). */
export const MAX_NAME_LENGTH = 100;
/** Longest `description`, in characters (design.md §5). */
export const MAX_DESCRIPTION_LENGTH = 1000;

const SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** The segments after the leading `/`; none for `/` itself. */
const segmentsOf = (path: string): string[] => (path === '/' ? [] : path.slice(1).split('/'));

/** Most host names of one service (design.md §5). */
export const MAX_HOSTS = 32;

/** The entry a reason is about, quoted for the message: `(got "x")`. */
export const got = (issue: { input: unknown }): string => `(got ${JSON.stringify(issue.input)})`;

/** A JSON object (not an array or null), as the guard before a strict object that says so in its own words. */
export const isObject = (input: unknown): boolean => typeof input === 'object' && input !== null && !Array.isArray(input);

/** `name`: a string of 1 to 100 characters once trimmed; kept trimmed. */
export const nameSchema = v.pipe(
  v.string('must be a string'),
  v.description(`1 to ${MAX_NAME_LENGTH} characters after trimming`),
  v.trim(),
  v.check((name) => name.length > 0, 'must not be empty'),
  ...atMostChars(MAX_NAME_LENGTH, `must be at most ${MAX_NAME_LENGTH} characters`),
);

/** `path`: the public path prefix, as its description says. */
export const pathSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`),
  v.description(
    `The public path prefix: / or /segment/…, segments of A-Z a-z 0-9 . _ ~ -, no empty, . or .. segment, no trailing /; ` +
      `unique ignoring case among host-less services and on each host (409 Path already in use); not at or under ${GATEWAY_PREFIXES.join(', ')} or ${RESERVED_PREFIX}`,
  ),
  v.startsWith('/', 'must start with /'),
  v.check((path) => path === '/' || !path.endsWith('/'), 'must not end with /'),
  v.check((path) => !segmentsOf(path).includes(''), 'must not contain an empty segment (//)'),
  v.check((path) => segmentsOf(path).every((s) => s !== '.' && s !== '..'), 'must not contain a . or .. segment'),
  v.check((path) => segmentsOf(path).every((s) => SEGMENT.test(s)), 'segments may only contain A-Z a-z 0-9 . _ ~ -'),
  // Only unreserved characters and no empty segments by now, so the routing key is the lowercase form.
  v.check((path) => !isGatewayPath(path.toLowerCase()), `must not be or sit under a gateway path (${GATEWAY_PREFIXES.join(', ')})`),
  v.check((path) => !isReservedPath(path.toLowerCase()), `must not be or sit under ${RESERVED_PREFIX} (the gateway's on every host)`),
);

/** Why `text` is no host name a service may list (shared/services/host-names.ts), or undefined. */
const hostProblem = (text: string): string | undefined => readHostName(text, { wildcard: true }).problem;

/** One of `hosts`: a host name, kept in its normal form. Reported on the list, so it quotes the entry. */
const hostEntry = v.pipe(
  v.string((issue) => `must contain only strings ${got(issue)}`),
  v.check((text) => hostProblem(text) === undefined, (issue) => `${hostProblem(issue.input as string)} ${got(issue)}`),
  v.transform((text) => readHostName(text, { wildcard: true }).name!),
);

/** The first host named twice in `hosts` (normal forms), or undefined. */
const repeatedHost = (hosts: readonly string[]): string | undefined => hosts.find((host, index) => hosts.indexOf(host) !== index);

/**
 * `hosts` (design.md §5): 0 to 32 host names, each kept in its normal form, none twice
 * once normalized. Whether a name is reserved (ADMIN_URL's host) is the registry's check
 * (reserved-hosts.ts), as it depends on the configuration.
 */
export const hostsSchema = v.pipe(
  v.array(hostEntry, 'must be a list of host names'),
  v.maxLength(MAX_HOSTS, `must have at most ${MAX_HOSTS} host names`),
  v.description(
    `The host names the service is reached on, at its path (0 to ${MAX_HOSTS}): kept lower-case, IDNA names as A-labels (xn--…), ` +
      `a trailing dot dropped; labels of a-z 0-9 - (1 to 63 characters), at most ${MAX_HOST_NAME_LENGTH} in all; no port, no IP address; ` +
      `a leading *. stands for one label (*.apps.example.com). Each (host, path) pair is unique in the registry (409 Path already in use). ` +
      `Empty: every host no service names`,
  ),
  v.check((hosts) => repeatedHost(hosts) === undefined, (issue) => `must not name a host twice (got ${JSON.stringify(repeatedHost(issue.input as string[]))})`),
);

/** `description`: a string of at most 1000 characters. */
export const descriptionSchema = v.pipe(
  v.string('must be a string'),
  ...atMostChars(MAX_DESCRIPTION_LENGTH, `must be at most ${MAX_DESCRIPTION_LENGTH} characters`),
);

/** `requireAuth`, `enabled`, `forwardAuthorization`. */
export const booleanSchema = v.boolean('must be a boolean');
