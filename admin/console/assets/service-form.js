// Gatehouse console: the create and edit forms. Sends the form to the JSON API (with the token of
// its hidden _csrf input) and shows each of the API's per-field messages next to its field
// (form-errors.js). The targets are one per line, `URL [weight]`, the rules one per line as
// rule-text.ts writes them; numbers are sent as numbers
// when they are whole, else as written, for the API to say what is wrong with them. An edit is conditional on the service being as the form was made with it
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
    hosts: 'Hosts',
    targets: 'Target URLs',
    loadBalancing: 'Load balancing',
    retries: 'Retries',
    outlierDetection: 'Passive health checks',
    'outlierDetection.maxFails': 'Failures',
    'outlierDetection.windowSeconds': 'Window',
    'outlierDetection.ejectSeconds': 'Ejection',
    healthCheck: 'In the active health checks,',
    'healthCheck.path': 'Health endpoint',
    'healthCheck.intervalSeconds': 'Interval',
    'healthCheck.timeoutMs': 'Timeout',
    'healthCheck.healthyThreshold': 'Healthy after',
    'healthCheck.unhealthyThreshold': 'Unhealthy after',
    'healthCheck.expectStatus': 'Expected status',
    description: 'Description',
    requireAuth: 'Sign-in required',
    access: 'An access policy',
    'access.groups': 'Groups',
    'access.emails': 'Emails',
    'access.emailDomains': 'Email domains',
    'access.subjects': 'Subjects',
    forwardAuthorization: 'Forwarding the bearer token',
    rules: 'Rules:',
    corsPreflight: 'CORS preflights',
  };
  /** The policy lists by the word a rule's line names them with (rule-text.ts RULE_POLICY_WORDS). */
  const POLICY_WORDS = { groups: 'groups', emails: 'emails', domains: 'emailDomains', subjects: 'subjects' };
  const submit = form.querySelector('button[type="submit"]');

  /** A whole number as a number; anything else as written (the API refuses it with a reason). */
  const numberOf = (text) => (/^\s*-?\d+\s*$/.test(text) ? Number(text) : text);

  /** A line of the targets' textarea as a target: `URL` or `URL weight`; more words stay one url, which the API refuses. */
  function targetOf(line) {
    const words = line.split(/\s+/);
    if (words.length > 2) return { url: line };
    return words.length === 1 ? { url: words[0] } : { url: words[0], weight: numberOf(words[1]) };
  }

  /**
   * A line of the rules' textarea as a rule (rule-text.ts writes them): its action, then words
   * starting with / are paths, `groups=a,b` (emails=, domains=, subjects=) a require rule's policy,
   * `maxAge=300` and `acr=a,b` its step-up, any other word methods (comma-separated). What is wrong
   * is the API's to say.
   */
  function ruleOf(line) {
    const [action, ...words] = line.split(/\s+/);
    const rule = { paths: [], action };
    const methods = [];
    const access = { groups: [], emails: [], emailDomains: [], subjects: [] };
    for (const word of words) {
      const list = /^(\w+)=(.*)$/.exec(word);
      if (word.startsWith('/')) rule.paths.push(...word.split(',').filter((path) => path !== ''));
      else if (list && Object.hasOwn(POLICY_WORDS, list[1])) access[POLICY_WORDS[list[1]]].push(...list[2].split(',').filter((entry) => entry !== ''));
      else if (list && list[1] === 'maxAge') rule.maxAge = numberOf(list[2]);
      else if (list && list[1] === 'acr') rule.acr = list[2].split(',').filter((entry) => entry !== '');
      else methods.push(...word.split(',').filter((method) => method !== ''));
    }
    if (methods.length > 0) rule.methods = methods;
    if (Object.values(access).some((entries) => entries.length > 0)) rule.access = access;
    return rule;
  }

  /** The inputs named `<prefix>.<key>` as an object of numbers (the expected status may be a class); empty ones left out. */
  function group(prefix, keys) {
    const entries = keys.map((key) => [key, form.elements.namedItem(`${prefix}.${key}`).value.trim()]).filter(([, text]) => text !== '');
    return Object.fromEntries(entries.map(([key, text]) => [key, key === 'path' ? text : numberOf(text)]));
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    gatehouse.clearFieldErrors(form);
    const value = (name) => form.elements.namedItem(name).value;
    const checked = (name) => form.elements.namedItem(name).checked;
    // The policy's lists are the textareas named access.<list>: one entry per line, blank lines
    // left out (the API trims each).
    const lists = form.querySelectorAll('textarea[name^="access."]');
    const access = Object.fromEntries([...lists].map((list) => [list.name.slice('access.'.length), list.value.split('\n').filter((line) => line.trim() !== '')]));
    // Hosts one per line or separated by commas; an empty list removes them all.
    const hosts = value('hosts').split(/[\n,]/).map((host) => host.trim()).filter((host) => host !== '');
    const targets = value('targets').split('\n').map((line) => line.trim()).filter((line) => line !== '').map(targetOf);
    const rules = value('rules').split('\n').map((line) => line.trim()).filter((line) => line !== '').map(ruleOf);
    const body = {
      name: value('name'),
      path: value('path'),
      hosts,
      targets,
      description: value('description'),
      requireAuth: checked('requireAuth'),
      access: Object.values(access).some((entries) => entries.length > 0) ? access : null,
      forwardAuthorization: checked('forwardAuthorization'),
      rules,
      corsPreflight: checked('corsPreflight') ? 'public' : 'auth',
      // step-up: empty is none (null); acr values one per line or separated by commas
      maxAge: value('maxAge').trim() === '' ? null : numberOf(value('maxAge')),
      acr: value('acr').trim() === '' ? null : value('acr').split(/[\n,]/).map((entry) => entry.trim()).filter((entry) => entry !== ''),
      loadBalancing: value('loadBalancing'),
      outlierDetection: group('outlierDetection', ['maxFails', 'windowSeconds', 'ejectSeconds']),
      healthCheck: checked('healthCheckEnabled')
        ? group('healthCheck', ['path', 'intervalSeconds', 'timeoutMs', 'healthyThreshold', 'unhealthyThreshold', 'expectStatus'])
        : null,
    };
    if (value('retries').trim() !== '') body.retries = numberOf(value('retries'));
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
      // A 409 is the path's; the API names the fields only for a (host, path) pair.
      if (error.status === 409 && !error.fields.path) error.fields.path = 'is already used by another service';
      gatehouse.showFieldErrors(form, error, 'The service', LABELS);
    } finally {
      submit.disabled = false;
      submit.removeAttribute('aria-busy');
    }
  });
})();
