// Gatehouse console: one click handler per kind of action button. While an action runs its button
// is marked busy (aria-busy) and further clicks on it are ignored, so a double click sends one
// request, not two (a second DELETE would answer 404, a second toggle undo the first).
(function () {
  'use strict';
  const gatehouse = (window.gatehouse = window.gatehouse || {});

  /**
   * Runs `action(button)` (async) when a button matching `selector` is clicked, at most once at a
   * time per button; buttons added later (live regions re-render) are handled too.
   */
  gatehouse.onButtonAction = function onButtonAction(selector, action) {
    const busy = new WeakSet();
    document.addEventListener('click', async (event) => {
      const button = event.target instanceof Element ? event.target.closest(selector) : null;
      if (!button || busy.has(button)) return;
      busy.add(button);
      button.setAttribute('aria-busy', 'true');
      try {
        await action(button);
      } finally {
        busy.delete(button);
        button.removeAttribute('aria-busy');
      }
    });
  };
})();
