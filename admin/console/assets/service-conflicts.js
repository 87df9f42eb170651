// Gatehouse console: what a change refused with 412 Precondition failed tells the admin (design.md
// §4.9). The change was conditional on the service being as the page showed it; someone else has
// changed it since. The notice names each field that differs now, before → after, and offers to
// reload the page with the service as it is.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  /** The service's fields, policy lists and balancings as the console names them (service-field-labels.ts). */
  const { fields: LABELS, policyLists: POLICY_LISTS, loadBalancing: BALANCING } = JSON.parse(
    document.querySelector('meta[name="gatehouse-service-labels"]').content,
  );

  /** The wording of the pool's settings, as pool-settings-text.ts has it. */
  const POOL_TEXT = {
    targets: (targets) => targets.map((t) => (t.weight === 1 ? t.url : `${t.url} (weight ${t.weight})`)).join(', '),
    loadBalancing: (method) => BALANCING[method] || method,
    healthCheck: (check) =>
      check === null
        ? 'Off'
        : `GET ${check.path} every ${check.intervalSeconds} s, timeout ${check.timeoutMs} ms, expects ${check.expectStatus}; ` +
          `healthy after ${check.healthyThreshold}, unhealthy after ${check.unhealthyThreshold} in a row`,
    outlierDetection: (d) => `${d.maxFails} failures within ${d.windowSeconds} s eject for ${d.ejectSeconds} s`,
  };

  /** A field's value as text: strings quoted, booleans yes/no, a policy by its lists, the pool's settings in words. */
  function show(field, value) {
    if (typeof value === 'boolean') return value ? 'yes' : 'no';
    if (field === 'hosts') return value && value.length > 0 ? value.join(', ') : 'none';
    if (field === 'access') {
      if (!value) return 'any signed-in user';
      const lists = Object.entries(POLICY_LISTS).filter(([key]) => value[key] && value[key].length > 0);
      return lists.map(([key, label]) => `${label}: ${value[key].join(', ')}`).join('; ');
    }
    if (Object.hasOwn(POOL_TEXT, field) && value !== undefined) return POOL_TEXT[field](value);
    if (typeof value === 'number') return String(value);
    return value === '' ? '(empty)' : `“${value}”`;
  }

  /** Each field of `before` that differs in `after`, as "Label: before → after". */
  function differences(before, after) {
    return Object.keys(LABELS)
      .filter((field) => JSON.stringify(before[field] ?? null) !== JSON.stringify(after[field] ?? null))
      .map((field) => `${LABELS[field]}: ${show(field, before[field])} → ${show(field, after[field])}`);
  }

  /**
   * Says that `failed` ("Could not disable “Orders”") because someone else changed `shown` (the
   * service as the page showed it) since: what changed, or that it is gone, with a Reload button,
   * which gets the focus.
   */
  async function explainConflict(failed, shown) {
    let current = null;
    try {
      current = await gatehouse.api('GET', `/api/services/${encodeURIComponent(shown.id)}`);
    } catch (error) {
      if (error.status !== 404) {
        gatehouse.notify(`${failed}: someone else changed “${shown.name}” since this page showed it, and it could not be read again: ${error.message}`, 'error');
        return;
      }
    }
    const changes = current ? differences(shown, current) : [];
    const what = current === null
      ? `someone else deleted “${shown.name}” since this page showed it.`
      : `someone else changed “${shown.name}” since this page showed it.${changes.length > 0 ? ` Changed: ${changes.join('; ')}.` : ''} Reload to see it as it is now.`;
    const notice = gatehouse.notify(`${failed}: ${what}`, 'error', { label: 'Reload', run: () => location.reload() });
    if (notice) notice.querySelector('.notice-action').focus();
  }

  gatehouse.explainConflict = explainConflict;
})();
