// Gatehouse console: the API's per-field messages (`fields` of a 400 answer) in a form. Each goes
// next to its field (the element marked data-error-for="<field>"), with the field marked invalid
// and the first of them focused; the rest, or the API's message, above the form ([data-form-error]).
(function () {
  'use strict';
  const gatehouse = window.gatehouse;

  /** Hides every message of `form` and unmarks its fields. */
  function clearFieldErrors(form) {
    const formError = form.querySelector('[data-form-error]');
    formError.hidden = true;
    formError.textContent = '';
    for (const slot of form.querySelectorAll('[data-error-for]')) {
      slot.hidden = true;
      slot.textContent = '';
    }
    for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
  }

  /**
   * Shows an ApiError's reasons in `form`: `what` names what was not saved ("The token"), `labels`
   * maps field names to their labels ("name" → "Name").
   */
  function showFieldErrors(form, error, what, labels) {
    const fields = Object.assign({}, error.fields);
    const formError = form.querySelector('[data-form-error]');
    let first = null;
    const elsewhere = [];
    for (const [name, reason] of Object.entries(fields)) {
      const slot = form.querySelector(`[data-error-for="${CSS.escape(name)}"]`);
      const input = form.elements.namedItem(name);
      if (!slot || !input) {
        elsewhere.push(`${name} ${reason}`);
        continue;
      }
      slot.textContent = `${labels[name] || name} ${reason}.`;
      slot.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      // A group of fields as a whole (a fieldset, such as a service's access policy): focus goes
      // to its first control.
      first = first || (input.matches('fieldset') ? input.querySelector('input, textarea, select') : input);
    }
    const placed = Object.keys(fields).length - elsewhere.length;
    formError.textContent = placed > 0
      ? `${what} was not saved. ${placed === 1 ? 'One field needs' : `${placed} fields need`} attention.${elsewhere.length ? ` Also: ${elsewhere.join('; ')}.` : ''}`
      : `${what} was not saved: ${error.message}`;
    formError.hidden = false;
    if (first) first.focus();
  }

  gatehouse.clearFieldErrors = clearFieldErrors;
  gatehouse.showFieldErrors = showFieldErrors;
})();
