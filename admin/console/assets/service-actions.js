// Gatehouse console: the buttons of a service (services table and service page). Enable/disable
// is one click; delete asks first, in a dialog that names the service (confirm-dialog.js). Both go
// through the JSON API, conditional on the service being as the page shows it (If-Match with the
// ETag of the buttons' data-etag, design.md §4.9); results and errors appear in the notice area,
// and a 412 says what someone else changed (service-conflicts.js).
(function () {
  'use strict';
  const gatehouse = window.gatehouse;

  /** The ETag and the service (as the page shows them) of the actions `button` belongs to. */
  function shown(button) {
    const actions = button.closest('[data-etag]');
    return { etag: actions.dataset.etag, service: JSON.parse(actions.dataset.service) };
  }

  async function toggle(button) {
    const { id, name } = button.dataset;
    const enable = button.dataset.enabled === 'true';
    const { etag, service } = shown(button);
    try {
      await gatehouse.api('PATCH', `/api/services/${encodeURIComponent(id)}/toggle`, { enabled: enable }, undefined, etag);
      gatehouse.notify(`${enable ? 'Enabled' : 'Disabled'} “${name}”.`, 'success');
      await gatehouse.refresh({ force: true });
    } catch (error) {
      const failed = `Could not ${enable ? 'enable' : 'disable'} “${name}”`;
      if (error.status === 412) await gatehouse.explainConflict(failed, service);
      else gatehouse.notify(`${failed}: ${error.message}`, 'error');
    }
  }

  async function remove(button) {
    const { id, name, path, afterDelete } = button.dataset;
    const confirmed = await gatehouse.confirmAction(
      `Delete “${name}”?`,
      `“${name}” stops answering at ${path} at once and leaves the registry. Its access log and audit entries are kept. This cannot be undone.`,
      `Delete “${name}”`,
    );
    if (!confirmed) {
      button.focus();
      return;
    }
    const { etag, service } = shown(button);
    try {
      await gatehouse.api('DELETE', `/api/services/${encodeURIComponent(id)}`, undefined, undefined, etag);
      if (afterDelete) {
        gatehouse.flash(`Deleted “${name}”.`);
        location.assign(afterDelete);
        return;
      }
      gatehouse.notify(`Deleted “${name}”.`, 'success');
      await gatehouse.refresh({ force: true });
    } catch (error) {
      if (error.status === 412) await gatehouse.explainConflict(`Could not delete “${name}”`, service);
      else gatehouse.notify(`Could not delete “${name}”: ${error.message}`, 'error');
    }
  }

  gatehouse.onButtonAction('button[data-action]', async (button) => {
    if (button.dataset.action === 'toggle') await toggle(button);
    else if (button.dataset.action === 'delete') await remove(button);
  });
})();
