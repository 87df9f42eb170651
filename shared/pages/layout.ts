/**
 * The layout of the gateway's own HTML pages, one look for both planes. This folder holds every
 * such page: the admin plane's home, sign-in failure and sign-out confirmation, the data plane's
 * answers for people (sign-in required, service disabled), and the console's error pages use it
 * too. It lives in shared/ because the data plane imports nothing from admin/; the console's own
 * pages, an application shell with scripts, are admin/console/.
 */

import { html, Html } from './html.js';

/** A complete page in Gatehouse's look; `csrfToken` goes into `<meta name="csrf-token">` (design.md §4). */
export function page(title: string, body: Html, csrfToken?: string): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${csrfToken ? html`<meta name="csrf-token" content="${csrfToken}">` : ''}
<title>${title} · Gatehouse</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<header><a class="brand" href="/">Gatehouse</a></header>
<main>${body}</main>
</body>
</html>`.value;
}

const STYLE = `
:root { color-scheme: light dark; --accent: #2563eb; --muted: #6b7280; --line: #d1d5db; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { padding: .75rem 1.25rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; color: inherit; }
main { max-width: 48rem; margin: 2rem auto; padding: 0 1.25rem; }
h1 { font-size: 1.5rem; margin: 0 0 1rem; }
.button { display: inline-block; padding: .6rem 1.1rem; border-radius: .4rem; background: var(--accent);
  color: #fff; text-decoration: none; font-weight: 600; border: 0; cursor: pointer; font-size: 1rem; }
.button.secondary { background: transparent; color: var(--accent); border: 1px solid var(--accent); }
a:focus-visible, .button:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.muted { color: var(--muted); }
.error { padding: .75rem 1rem; border-left: 4px solid #dc2626; background: rgba(220, 38, 38, .08); }
ul.services { list-style: none; padding: 0; }
ul.services li { padding: .6rem 0; border-bottom: 1px solid var(--line); }
code { font-size: .9em; }
form.logout { display: inline; margin: 0; }
`;
