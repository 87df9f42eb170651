// Gatehouse console: the access-log filter form. The time inputs show the viewer's local time; the
// query carries ISO 8601 UTC (the API's `from` and `to`), and empty filters stay out of the URL.
(function () {
  'use strict';
  const form = document.querySelector('form[data-log-filters]');
  if (!form) return;
  const pad = (n) => String(n).padStart(2, '0');
  const localValue = (date) =>
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
  const timeInputs = [...form.querySelectorAll('input[data-iso-field]')];
  const hiddenFor = (input) => form.elements.namedItem(input.dataset.isoField);

  for (const input of timeInputs) {
    const date = new Date(hiddenFor(input).value);
    if (hiddenFor(input).value && !Number.isNaN(date.getTime())) input.value = localValue(date);
  }

  form.addEventListener('submit', () => {
    for (const input of timeInputs) {
      // A datetime-local value has no zone, so Date reads it as the viewer's local time.
      hiddenFor(input).value = input.value ? new Date(input.value).toISOString() : '';
    }
    for (const element of form.elements) {
      if (element.name && !element.value) element.disabled = true;
    }
  });
  // Coming back with the Back button shows the form as it was left: usable again.
  window.addEventListener('pageshow', () => {
    for (const element of form.elements) element.disabled = false;
  });
})();
