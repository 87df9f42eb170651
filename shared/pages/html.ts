/**
 * HTML built safely: a tagged template that escapes every interpolated value, for every page the
 * gateway serves (both planes).
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and quoted attribute values. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/** Tagged template that escapes every interpolated value unless it is already {@link Html}. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0]!;
  values.forEach((value, i) => {
    out += renderValue(value) + strings[i + 1]!;
  });
  return new Html(out);
}

/** Markup that is already safe (built by {@link html}). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

function renderValue(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}
