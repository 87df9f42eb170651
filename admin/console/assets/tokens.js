// Gatehouse console: the API tokens page (design.md §4.8). The form creates a token through
// POST /api/tokens (with the token of its hidden _csrf input) and shows its secret, which exists
// only in that answer, with a copy button; Revoke asks first (confirm-dialog.js), then calls
// DELETE /api/tokens/:id. The list is a live region, refreshed after each change.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  const form = document.querySelector('form[data-token-form]');
  if (!form) return;
  const LABELS = { name: 'Name', scope: 'Scope', expiresInDays: 'Expiry' };
  const submit = form.querySelector('button[type="submit"]');
  const panel = document.querySelector('[data-new-secret]');
  const secretInput = panel.querySelector('input');
  const copyStatus = panel.querySelector('[data-copy-status]');

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    gatehouse.clearFieldErrors(form);
    const value = (name) => form.elements.namedItem(name).value;
    const lifetime = value('expiresInDays');
    const body = { name: value('name'), scope: value('scope'), expiresInDays: lifetime === 'never' ? null : Number(lifetime) };
    submit.setAttribute('aria-busy', 'true');
    submit.disabled = true;
    try {
      const created = await gatehouse.api('POST', '/api/tokens', body, value('_csrf'));
      form.elements.namedItem('name').value = '';
      showSecret(created.secret);
      gatehouse.notify(`Created “${created.name}”. Copy it now: it is not shown again.`, 'success');
      await gatehouse.refresh({ force: true });
    } catch (error) {
      gatehouse.showFieldErrors(form, error, 'The token', LABELS);
    } finally {
      submit.disabled = false;
      submit.removeAttribute('aria-busy');
    }
  });

  function showSecret(secret) {
    secretInput.value = secret;
    copyStatus.textContent = '';
    panel.hidden = false;
    secretInput.focus();
    secretInput.select();
  }

  /** Copies the secret; where the Clipboard API is missing (plain http: off localhost) it is left selected. */
  async function copySecret() {
    secretInput.focus();
    secretInput.select();
    try {
      await navigator.clipboard.writeText(secretInput.value);
      copyStatus.textContent = 'Copied to the clipboard.';
    } catch {
      copyStatus.textContent = 'This browser would not copy it here: the token is selected, press Ctrl+C (⌘C on a Mac).';
    }
  }

  async function revoke(button) {
    const { id, name } = button.dataset;
    const confirmed = await gatehouse.confirmAction(
      `Revoke “${name}”?`,
      `Requests with “${name}” are refused from now on (401). Its audit entries are kept. This cannot be undone.`,
      `Revoke “${name}”`,
    );
    if (!confirmed) {
      button.focus();
      return;
    }
    try {
      await gatehouse.api('DELETE', `/api/tokens/${encodeURIComponent(id)}`);
      gatehouse.notify(`Revoked “${name}”.`, 'success');
      await gatehouse.refresh({ force: true });
    } catch (error) {
      gatehouse.notify(`Could not revoke “${name}”: ${error.message}`, 'error');
    }
  }

  panel.querySelector('[data-copy-secret]').addEventListener('click', copySecret);
  gatehouse.onButtonAction('button[data-revoke-token]', revoke);
})();
