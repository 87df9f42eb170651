// Gatehouse console: keeps a page current without a reload. Elements marked data-live="<name>" are
// refreshed from a fresh copy of the same page (fetched as HTML, so the server renders them one
// way only) every data-live-refresh ms, and at once after an action (gatehouse.refresh).
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  const interval = Number(document.body.dataset.liveRefresh) || 0;
  /** The server's markup each region was last filled with. */
  const rendered = new WeakMap();
  let inFlight = null;
  let timer;
  let failing = false;

  /**
   * Fetches the page again and swaps every live region whose markup changed. Unless `force`, a
   * region holding the keyboard focus or an opened <details> (or any region while a dialog is open) is left alone; after
   * a forced swap the focus returns to the element with the same data-focus-key.
   */
  function refresh(options) {
    const force = Boolean(options && options.force);
    if (inFlight && !force) return inFlight;
    inFlight = load(force).finally(() => {
      inFlight = null;
    });
    return inFlight;
  }

  async function load(force) {
    let fresh;
    try {
      const response = await fetch(location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin', cache: 'no-store' });
      if (response.redirected) throw new Error('your session has ended; reload the page to sign in again');
      if (!response.ok) throw new Error(`the gateway answered HTTP ${response.status}`);
      fresh = new DOMParser().parseFromString(await response.text(), 'text/html');
    } catch (error) {
      const reason = error instanceof TypeError ? 'the gateway could not be reached' : error.message;
      if (!failing) gatehouse.notify(`This page stopped updating: ${reason}.`, 'error');
      failing = true;
      return;
    }
    if (failing) gatehouse.notify('This page is updating again.', 'info');
    failing = false;
    swap(fresh, force);
  }

  function swap(fresh, force) {
    const active = document.activeElement;
    const focusKey = active && active.dataset ? active.dataset.focusKey : undefined;
    let focusLost = false;
    for (const region of document.querySelectorAll('[data-live]')) {
      const next = fresh.querySelector(`[data-live="${CSS.escape(region.dataset.live)}"]`);
      if (!next || rendered.get(region) === next.innerHTML) continue;
      const holdsFocus = region.contains(active);
      // An opened long path (panels/access-log-section.ts) stays open until its reader closes it.
      if (!force && (holdsFocus || region.querySelector('details[open]') || document.querySelector('dialog[open]'))) continue;
      region.innerHTML = next.innerHTML;
      rendered.set(region, next.innerHTML);
      gatehouse.localizeTimes(region);
      if (holdsFocus) focusLost = true;
    }
    if (!focusLost) return;
    const again = focusKey && document.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`);
    (again || document.getElementById('main')).focus();
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      if (!document.hidden) await refresh();
      schedule();
    }, interval);
  }

  if (interval > 0) {
    schedule();
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) refresh();
    });
  }
  gatehouse.refresh = refresh;
})();
