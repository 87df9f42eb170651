// Gatehouse console: the notice area under the header. Results and API errors are shown there,
// never swallowed; a notice for the next page (after a redirect) is kept in sessionStorage.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  const FLASH_KEY = 'gatehouse:flash';

  /**
   * Shows `message`; kind is 'success', 'error' (announced at once) or 'info'. `action`, when
   * given, `{ label, run }`, adds a button that calls `run`. Returns the notice element.
   */
  function notify(message, kind, action) {
    const area = document.getElementById('notices');
    if (!area) return null;
    const notice = document.createElement('p');
    notice.className = `notice ${kind || 'success'}`;
    notice.setAttribute('role', kind === 'error' ? 'alert' : 'status');
    const text = document.createElement('span');
    text.textContent = message;
    const dismiss = document.createElement('button');
    dismiss.type = 'button';
    dismiss.className = 'notice-close';
    dismiss.setAttribute('aria-label', 'Dismiss this message');
    dismiss.textContent = '×';
    dismiss.addEventListener('click', () => notice.remove());
    notice.append(text);
    if (action) {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = 'button small secondary notice-action';
      button.textContent = action.label;
      button.addEventListener('click', action.run);
      notice.append(button);
    }
    notice.append(dismiss);
    area.replaceChildren(notice);
    return notice;
  }

  /** Keeps `message` for the next page this tab opens. */
  function flash(message) {
    try {
      sessionStorage.setItem(FLASH_KEY, message);
    } catch {
      // Storage disabled: the next page simply shows no notice.
    }
  }

  function takeFlash() {
    try {
      const message = sessionStorage.getItem(FLASH_KEY);
      sessionStorage.removeItem(FLASH_KEY);
      return message;
    } catch {
      return null;
    }
  }

  const pending = takeFlash();
  if (pending) notify(pending, 'success');

  gatehouse.notify = notify;
  gatehouse.flash = flash;
})();
