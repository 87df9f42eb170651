import { POLICY_LISTS } from './access-policy-text.js';
import { LOAD_BALANCING_LABELS } from './pool-settings-text.js';

/**
 * A service's fields as the console's forms name them: the audit table's before/after lines and
 * the browser's 412 notice (service-conflicts.js, which reads them from the `SERVICE_LABELS_META` meta).
 */
export const SERVICE_FIELD_LABELS: Readonly<Record<string, string>> = {
  name: 'Name',
  path: 'Path',
  hosts: 'Hosts',
  targetUrl: 'Target URL',
  targets: 'Targets',
  requireAuth: 'Sign-in required',
  description: 'Description',
  enabled: 'Enabled',
  access: 'Who may use it',
  forwardAuthorization: 'Bearer token forwarded',
  loadBalancing: 'Load balancing',
  healthCheck: 'Active health checks',
  outlierDetection: 'Passive health checks',
  retries: 'Retries',
  rules: 'Rules',
  corsPreflight: 'CORS preflights',
  maxAge: 'Recent sign-in (seconds)',
  acr: 'Authentication levels (acr)',
};

/**
 * A service's `hosts` as the audit table words them: `app.example.com, *.apps.example.com`, or
 * `none` for a service without (absent or `[]`; a value of another shape as JSON).
 */
export function hostsText(hosts: unknown): string {
  if (hosts === undefined || hosts === null || (Array.isArray(hosts) && hosts.length === 0)) return 'none';
  return Array.isArray(hosts) ? hosts.map(String).join(', ') : JSON.stringify(hosts);
}

/** Name of the `<meta>` whose content is `serviceLabelsJson`. */
export const SERVICE_LABELS_META = 'gatehouse-service-labels';

/**
 * The labels the browser scripts need, as JSON `{fields: {name: 'Name', …}, policyLists:
 * {groups: 'Groups', …}, loadBalancing: {round_robin: 'Round robin (weighted)', …}}`: pages carry
 * it in a `<meta>` so the scripts name fields and values as the server does (the pages' CSP allows
 * no inline script).
 */
export const serviceLabelsJson = JSON.stringify({
  fields: SERVICE_FIELD_LABELS,
  policyLists: Object.fromEntries(POLICY_LISTS.map(({ key, label }) => [key, label])),
  loadBalancing: LOAD_BALANCING_LABELS,
});
