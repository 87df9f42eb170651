// Gatehouse console: the buttons of a service (services table and service page). Enable/disable
// is one click; delete asks first, in a dialog that names the service (confirm-dialog.js). Both go
// through the JSON API; results and errors appear in the notice area.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;

  async function toggle(button) {
    const { id, name } = button.dataset;
    const enable = button.dataset.enabled === 'true';
    try {
      await gatehouse.api('PATCH', `/api/services/${encodeURIComponent(id)}/toggle`, { enabled: enable });
      gatehouse.notify(`${enable ? 'Enabled' : 'Disabled'} “${name}”.`, 'success');
      await gatehouse.refresh({ force: true });
    } catch (error) {
      gatehouse.notify(`Could not ${enable ? 'enable' : 'disable'} “${name}”: ${error.message}`, 'error');
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
    try {
      await gatehouse.api('DELETE', `/api/services/${encodeURIComponent(id)}`);
      if (afterDelete) {
        gatehouse.flash(`Deleted “${name}”.`);
        location.assign(afterDelete);
        return;
      }
      gatehouse.notify(`Deleted “${name}”.`, 'success');
      await gatehouse.refresh({ force: true });
    } catch (error) {
      gatehouse.notify(`Could not delete “${name}”: ${error.message}`, 'error');
    }
  }

  const busy = new WeakSet();
  document.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-action]') : null;
    if (!button || busy.has(button)) return;
    busy.add(button);
    button.setAttribute('aria-busy', 'true');
    try {
      if (button.dataset.action === 'toggle') await toggle(button);
      else if (button.dataset.action === 'delete') await remove(button);
    } finally {
      busy.delete(button);
      button.removeAttribute('aria-busy');
    }
  });
})();
