// Gatehouse console: the create and edit forms. Sends the form to the JSON API (with the token of
// its hidden _csrf input) and shows each of the API's per-field messages next to its field
// (form-errors.js). An edit is conditional on the service being as the form was made with it
// (If-Match with the form's data-etag); when someone else changed it since, the notice says what
// changed and offers to reload (service-conflicts.js, design.md §4.9).
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
  const submit = form.querySelector('button[type="submit"]');

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    gatehouse.clearFieldErrors(form);
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
      const service = await gatehouse.api(form.dataset.method, form.dataset.endpoint, body, value('_csrf'), form.dataset.etag);
      gatehouse.flash(`${creating ? 'Created' : 'Saved'} “${service.name}”.`);
      location.assign(`/dashboard/services/${encodeURIComponent(service.id)}`);
    } catch (error) {
      if (error.status === 412) {
        await gatehouse.explainConflict('Your changes were not saved', JSON.parse(form.dataset.service));
        return;
      }
      // A 409 is the path's, though the API names no field for it.
      if (error.status === 409 && !error.fields.path) error.fields.path = 'is already used by another service';
      gatehouse.showFieldErrors(form, error, 'The service', LABELS);
    } finally {
      submit.disabled = false;
      submit.removeAttribute('aria-busy');
    }
  });
})();
