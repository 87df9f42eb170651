import type { SessionUser } from '../../shared/types.js';
import { html, type Html } from '../../shared/pages/html.js';
import { logoutForm } from '../../shared/pages/logout-page.js';
import type { ConsoleAssets } from './console-assets.js';
import { SERVICE_LABELS_META, serviceLabelsJson } from './service-field-labels.js';

/** What every console page needs about the request. */
export interface ConsoleView {
  user: SessionUser;
  /** The session's CSRF token: `<meta name="csrf-token">` and the hidden input of every form. */
  csrfToken: string;
  assets: ConsoleAssets;
  /** Where the proxied services are, for links to them: `''` (this origin) or PUBLIC_URL's origin when the console has its own (ADMIN_URL). */
  servicesOrigin: string;
  /** PUBLIC_URL's origin, always: links to a service's hosts take its scheme and port (services-table.ts `hostLinks`). */
  publicOrigin: string;
}

/** The hidden CSRF input every form of the console carries (interface.md §5.6). */
export const csrfInput = (view: ConsoleView): Html => html`<input type="hidden" name="_csrf" value="${view.csrfToken}">`;

/** The console's sections, for the navigation's `aria-current`. */
export type ConsoleSection = 'overview' | 'audit' | 'sessions' | 'new-service' | 'tokens' | 'certificates' | 'none';

export interface ConsolePageOptions {
  title: string;
  section: ConsoleSection;
  body: Html;
  /** Browser scripts this page needs beyond the common ones (names in admin/console/assets). */
  scripts?: string[];
  /** Loads uPlot and the chart script. */
  charts?: boolean;
  /** Refreshes the page's `data-live` regions every few seconds (live-regions.js). */
  live?: boolean;
}

/** Scripts every console page loads, in order (classic `defer` scripts sharing `window.gatehouse`). */
const COMMON_SCRIPTS = ['api.js', 'notices.js', 'local-time.js', 'live-regions.js', 'confirm-dialog.js', 'button-actions.js', 'service-conflicts.js', 'service-actions.js'];

/**
 * A complete console page: header with navigation and the signed-in admin, a notice area for
 * results and API errors, the confirmation dialog, and `main`. Scripts are files served by the
 * admin process (the pages' CSP allows no inline script).
 */
export function consolePage(view: ConsoleView, options: ConsolePageOptions): string {
  const { assets } = view;
  const scripts = [...COMMON_SCRIPTS, ...(options.charts ? ['uplot.js', 'charts.js'] : []), ...(options.scripts ?? [])];
  const navLink = (section: ConsoleSection, href: string, label: string) =>
    html`<a href="${href}"${options.section === section ? html` aria-current="page"` : ''}>${label}</a>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${view.csrfToken}">
<meta name="${SERVICE_LABELS_META}" content="${serviceLabelsJson}">
<title>${options.title} · Gatehouse console</title>
<link rel="stylesheet" href="${assets.url('console.css')}">
${options.charts ? html`<link rel="stylesheet" href="${assets.url('uplot.css')}">` : ''}
${scripts.map((name) => html`<script defer src="${assets.url(name)}"></script>\n`)}
</head>
<body${options.live ? html` data-live-refresh="5000"` : ''}>
<a class="skip-link" href="#main">Skip to content</a>
<header class="console-header">
  <a class="brand" href="/dashboard">Gatehouse</a>
  <nav aria-label="Console">
    ${navLink('overview', '/dashboard', 'Overview')}
    ${navLink('audit', '/dashboard/audit', 'Audit log')}
    ${navLink('sessions', '/dashboard/sessions', 'Sessions')}
    ${navLink('new-service', '/dashboard/services/new', 'New service')}
    ${navLink('tokens', '/dashboard/tokens', 'API tokens')}
    ${navLink('certificates', '/dashboard/certificates', 'Certificates')}
  </nav>
  <p class="who"><span title="${view.user.email}">${view.user.name || view.user.email}</span> · <a href="${view.servicesOrigin}/">Home</a> · ${logoutForm(view.csrfToken, 'link-button')}</p>
</header>
<div id="notices" class="notices" aria-live="polite"></div>
<main id="main" tabindex="-1">
<noscript><p class="notice error">The console needs JavaScript for changes and live charts; the tables work without it.</p></noscript>
${options.body}
</main>
<dialog id="confirm-dialog" aria-labelledby="confirm-title" aria-describedby="confirm-text">
  <form method="dialog">
    ${csrfInput(view)}
    <h2 id="confirm-title">Are you sure?</h2>
    <p id="confirm-text"></p>
    <div class="actions">
      <button type="submit" value="cancel" class="button secondary" autofocus>Cancel</button>
      <button type="submit" value="confirm" class="button danger" id="confirm-button">Confirm</button>
    </div>
  </form>
</dialog>
</body>
</html>`.value;
}
