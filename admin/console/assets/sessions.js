// Gatehouse console: the Sessions page. Revoke ends one session at once through
// DELETE /api/sessions/:id; Sign out everywhere asks first (confirm-dialog.js), then ends every
// session of that user through DELETE /api/users/:sub/sessions. Both carry the page's CSRF token
// (api.js); the list is a live region, refreshed after each change. Signing oneself out everywhere
// ends this browser's session too: the page then reloads, to the sign-in.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;

  async function revoke(button) {
    const { id, user, browser } = button.dataset;
    try {
      await gatehouse.api('DELETE', `/api/sessions/${encodeURIComponent(id)}`);
      gatehouse.notify(`Revoked the session of ${user} in ${browser}.`, 'success');
    } catch (error) {
      gatehouse.notify(`Could not revoke the session of ${user}: ${error.message}`, 'error');
    }
    await gatehouse.refresh({ force: true });
  }

  async function signOutEverywhere(button) {
    const { sub, user, self } = button.dataset;
    const confirmed = await gatehouse.confirmAction(
      `Sign ${user} out everywhere?`,
      `Every session of ${user} ends at once, in every browser and on every service: their next request needs a new sign-in${self ? ', and so does yours: this is your own account' : ''}. The identity provider may sign them in again without asking for a password.`,
      'Sign out everywhere',
    );
    if (!confirmed) {
      button.focus();
      return;
    }
    try {
      const result = await gatehouse.api('DELETE', `/api/users/${encodeURIComponent(sub)}/sessions`);
      const ended = result.revoked === 1 ? '1 session ended' : `${result.revoked} sessions ended`;
      if (self) {
        gatehouse.flash(`Signed ${user} out everywhere: ${ended}.`);
        location.reload();
        return;
      }
      gatehouse.notify(`Signed ${user} out everywhere: ${ended}.`, 'success');
    } catch (error) {
      gatehouse.notify(`Could not sign ${user} out everywhere: ${error.message}`, 'error');
    }
    await gatehouse.refresh({ force: true });
  }

  gatehouse.onButtonAction('button[data-revoke-session]', revoke);
  gatehouse.onButtonAction('button[data-sign-out-user]', signOutEverywhere);
})();
