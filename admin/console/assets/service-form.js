// Gatehouse console: the create and edit forms. Sends the form to the JSON API (with the token of
// its hidden _csrf input) and shows each of the API's per-field messages next to its field.
(function () {
  'use strict';
  const gatehouse = window.gatehouse;
  const form = document.querySelector('form[data-service-form]');
  if (!form) return;
  const LABELS = {
    name: 'Name',
    path: 'Path',
    targetUrl: 'Target URL',
    description: 'Description',
    requireAuth: 'Sign-in required',
    access: 'An access policy',
    'access.groups': 'Groups',
    'access.emails': 'Emails',
    'access.emailDomains': 'Email domains',
    'access.subjects': 'Subjects',
    forwardAuthorization: 'Forwarding the bearer token',
  };
  const formError = form.querySelector('[data-form-error]');
  const submit = form.querySelector('button[type="submit"]');

  function clearErrors() {
    formError.hidden = true;
    formError.textContent = '';
    for (const slot of form.querySelectorAll('[data-error-for]')) {
      slot.hidden = true;
      slot.textContent = '';
    }
    for (const input of form.querySelectorAll('[aria-invalid]')) input.removeAttribute('aria-invalid');
  }

  /** Puts each reason next to its field and focuses the first; anything else goes above the form. */
  function showErrors(error) {
    const fields = Object.assign({}, error.fields);
    if (error.status === 409 && !fields.path) fields.path = 'is already used by another service';
    let first = null;
    const elsewhere = [];
    for (const [name, reason] of Object.entries(fields)) {
      const slot = form.querySelector(`[data-error-for="${CSS.escape(name)}"]`);
      const input = form.elements.namedItem(name);
      if (!slot || !input) {
        elsewhere.push(`${name} ${reason}`);
        continue;
      }
      slot.textContent = `${LABELS[name] || name} ${reason}.`;
      slot.hidden = false;
      input.setAttribute('aria-invalid', 'true');
      // The policy as a whole (a fieldset): focus goes to its first list.
      first = first || (input.matches('fieldset') ? input.querySelector('textarea') : input);
    }
    const placed = Object.keys(fields).length - elsewhere.length;
    formError.textContent = placed > 0
      ? `The service was not saved. ${placed === 1 ? 'One field needs' : `${placed} fields need`} attention.${elsewhere.length ? ` Also: ${elsewhere.join('; ')}.` : ''}`
      : `The service was not saved: ${error.message}`;
    formError.hidden = false;
    if (first) first.focus();
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearErrors();
    const value = (name) => form.elements.namedItem(name).value;
    const checked = (name) => form.elements.namedItem(name).checked;
    // The policy's lists are the textareas named access.<list>: one entry per line, blank lines
    // left out (the API trims each).
    const lists = form.querySelectorAll('textarea[name^="access."]');
    const access = Object.fromEntries([...lists].map((list) => [list.name.slice('access.'.length), list.value.split('\n').filter((line) => line.trim() !== '')]));
    const body = {
      name: value('name'),
      path: value('path'),
      targetUrl: value('targetUrl'),
      description: value('description'),
      requireAuth: checked('requireAuth'),
      access: Object.values(access).some((entries) => entries.length > 0) ? access : null,
      forwardAuthorization: checked('forwardAuthorization'),
    };
    const creating = form.dataset.method === 'POST';
    submit.setAttribute('aria-busy', 'true');
    submit.disabled = true;
    try {
      const service = await gatehouse.api(form.dataset.method, form.dataset.endpoint, body, value('_csrf'));
      gatehouse.flash(`${creating ? 'Created' : 'Saved'} “${service.name}”.`);
      location.assign(`/dashboard/services/${encodeURIComponent(service.id)}`);
    } catch (error) {
      showErrors(error);
    } finally {
      submit.disabled = false;
      submit.removeAttribute('aria-busy');
    }
  });
})();
