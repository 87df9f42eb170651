import { html, type Html } from '../../shared/pages/html.js';

/** Small pieces of markup shared by the console's pages. */

const COUNT_FORMAT = new Intl.NumberFormat('en');

/** `1234` → `1,234` (the page's language is English; the browser does not reformat counts). */
export const formatCount = (n: number): string => COUNT_FORMAT.format(n);

/**
 * A point in time: rendered in UTC, rewritten by local-time.js into the viewer's locale and time
 * zone, with the UTC time kept in `title` (shown on hover).
 */
export function timeTag(iso: string): Html {
  const utc = `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
  return html`<time datetime="${iso}" title="${utc}">${utc}</time>`;
}

/** What a list shows when it has nothing: what that means and what to do next. */
export function emptyState(message: Html | string, action?: Html): Html {
  return html`<div class="empty-state"><p>${message}</p>${action ?? ''}</div>`;
}

/** A labelled yes/no badge. */
export function badge(on: boolean, onText: string, offText: string): Html {
  return html`<span class="badge ${on ? 'on' : 'off'}">${on ? onText : offText}</span>`;
}

/**
 * "Showing 51–100 of 1,234" with links to the newer and older pages; the links keep the rest of
 * `url`'s query (the filters) and change only `offset`.
 */
export function pager(options: { url: URL; total: number; offset: number; shown: number; limit: number; label: string }): Html {
  const { url, total, offset, shown, limit } = options;
  const link = (to: number) => {
    const target = new URL(url);
    if (to > 0) target.searchParams.set('offset', String(to));
    else target.searchParams.delete('offset');
    return target.pathname + target.search;
  };
  const range = shown > 0 ? `${formatCount(offset + 1)}–${formatCount(offset + shown)} of ${formatCount(total)}` : `none of ${formatCount(total)}`;
  const newer = offset > 0 ? html`<a class="button secondary" href="${link(Math.max(0, offset - limit))}" rel="prev">← Newer</a>` : '';
  const older = offset + shown < total ? html`<a class="button secondary" href="${link(offset + limit)}" rel="next">Older →</a>` : '';
  return html`<nav class="pager" aria-label="${options.label}"><span>Showing ${range}</span> ${newer} ${older}</nav>`;
}

/** An error from the server, shown where it applies (never swallowed). */
export function errorNotice(message: string): Html {
  return html`<p class="notice error" role="alert">${message}</p>`;
}
