/**
 * A {@link CookieJar} that also keeps every `Set-Cookie` field it was given, as received, with the
 * URL that sent it: for assertions on attributes the jar applies rather than keeps (a `Domain`
 * attribute, a deletion).
 */
import { CookieJar } from './cookie-jar.js';

/** One `Set-Cookie` field as a response carried it. */
export interface ReceivedSetCookie {
  /** The URL of the response. */
  url: string;
  /** The field's value, e.g. `gw_session=…; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600`. */
  field: string;
}

/** A browser's cookies (see cookie-jar.ts) and every `Set-Cookie` that reached them. */
export class RecordingCookieJar extends CookieJar {
  /** Every field stored so far, oldest first. */
  readonly received: ReceivedSetCookie[] = [];

  override store(setCookie: string | string[] | undefined, url: string | URL): void {
    for (const field of typeof setCookie === 'string' ? [setCookie] : setCookie ?? []) this.received.push({ url: String(url), field });
    super.store(setCookie, url);
  }

  /** The fields received from responses on `host` that set (or clear) cookie `name`, oldest first. */
  fieldsFor(name: string, host: string): string[] {
    return this.received.filter((r) => new URL(r.url).hostname === host && r.field.startsWith(`${name}=`)).map((r) => r.field);
  }
}

/** The attributes of a `Set-Cookie` field (RFC 6265 §5.2), names lowercased; a flag maps to ''. */
export function cookieAttributes(field: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const part of field.split(';').slice(1)) {
    const eq = part.indexOf('=');
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    attributes.set(name, eq < 0 ? '' : part.slice(eq + 1).trim());
  }
  return attributes;
}
