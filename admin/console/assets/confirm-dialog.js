// Gatehouse console: the confirmation every destructive action asks for first (deleting a service,
// revoking a token), in the page's <dialog id="confirm-dialog">, which names what will happen.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  const dialog = document.getElementById('confirm-dialog');

  /** Resolves true when the admin confirms; the dialog names what will happen. */
  function confirmAction(title, text, confirmLabel) {
    if (!dialog || typeof dialog.showModal !== 'function') return Promise.resolve(window.confirm(`${title}\n\n${text}`));
    dialog.querySelector('#confirm-title').textContent = title;
    dialog.querySelector('#confirm-text').textContent = text;
    dialog.querySelector('#confirm-button').textContent = confirmLabel;
    dialog.returnValue = '';
    dialog.showModal();
    return new Promise((resolve) => {
      dialog.addEventListener('close', () => resolve(dialog.returnValue === 'confirm'), { once: true });
    });
  }

  gatehouse.confirmAction = confirmAction;
})();
