import { DEFAULT_HEALTH_CHECK, DEFAULT_LOAD_BALANCING, DEFAULT_OUTLIER_DETECTION, DEFAULT_RETRIES } from '../../shared/services/target-pool-settings.js';
import type { AccessPolicy, HealthCheck, OutlierDetection, ServiceTarget } from '../../shared/types.js';
import { html, type Html } from '../../shared/pages/html.js';
import type { TaggedService } from '../registry/service-registry.js';
import { HEALTH_CHECK_RANGES, LOAD_BALANCING_METHODS, MAX_RETRIES, MAX_TARGETS, MAX_WEIGHT, OUTLIER_DETECTION_RANGES } from '../registry/pool-fields.js';
import { MAX_DESCRIPTION_LENGTH, MAX_HOSTS, MAX_NAME_LENGTH } from '../registry/service-fields.js';
import { POLICY_LISTS } from './access-policy-text.js';
import { consolePage, csrfInput, type ConsoleView } from './console-layout.js';
import { LOAD_BALANCING_LABELS } from './pool-settings-text.js';
import { ruleLine } from './rule-text.js';
import { MAX_RULES } from '../registry/rule-fields.js';
import { MAX_ACR_VALUES, MAX_STEP_UP_AGE_S } from '../../shared/identity/step-up.js';

/** What each list of the access policy holds, under its textarea (design.md §4.7). */
const POLICY_HINTS: Record<keyof AccessPolicy, string> = {
  groups: 'Group names from the identity provider’s groups claim (OIDC_GROUPS_CLAIM), matched exactly.',
  emails: 'Email addresses, matched against the verified email in any case.',
  emailDomains: 'Domains such as example.com, without @: any verified email ending in @ and the domain, not its subdomains.',
  subjects: 'Subject identifiers (sub) from the identity provider, matched exactly.',
};

/** What each balancing does, under the choice (design.md §4.13). */
const BALANCING_HINTS: Record<(typeof LOAD_BALANCING_METHODS)[number], string> = {
  round_robin: 'each target in turn, as often as its weight says',
  least_requests: 'the less busy of two targets picked at random',
  client_ip: 'each client address keeps its target; losing a target moves only its clients',
  cookie: 'a signed cookie keeps each browser on its target',
};

/**
 * `GET /dashboard/services/new` and `/dashboard/services/:id/edit` (design.md §4.6): the service form,
 * the hosts (design.md §5) one per line, the targets (design.md §4.13) as one per line (`URL [weight]`), the access policy (design.md §4.7) as
 * four lists of one entry per line, the rules (design.md §4.18) one per line (rule-text.ts), the balancing, retries and both kinds of health checks (the
 * active ones on or off, their fields filled in either way). service-form.js sends it to
 * `POST /api/services` or `PUT /api/services/:id` and shows each of the API's per-field messages
 * (`fields` of the 400 answer, `access.emails` for a list, `healthCheck.timeoutMs`) next to its field. An edit
 * sends the service's ETag as If-Match; when someone else changed the service since (412), the
 * page says what changed (`data-service`, the service as the form shows it) and offers to reload
 * (design.md §4.9).
 */
export function serviceFormPage(view: ConsoleView, tagged?: TaggedService): string {
  const service = tagged?.service;
  const editing = service !== undefined;
  const title = editing ? `Edit ${service.name}` : 'New service';
  const cancel = editing ? `/dashboard/services/${service.id}` : '/dashboard';
  const body = html`<p class="breadcrumb"><a href="/dashboard">Overview</a> / ${editing ? html`<a href="${cancel}">${service.name}</a> / Edit` : 'New service'}</p>
<h1>${title}</h1>
<form class="service-form" method="post" novalidate data-service-form
  data-method="${editing ? 'PUT' : 'POST'}" data-endpoint="${editing ? `/api/services/${service.id}` : '/api/services'}"
  ${editing ? html`data-etag="${tagged!.etag}" data-service="${JSON.stringify(service)}"` : ''}>
  ${csrfInput(view)}
  <div class="form-error" data-form-error role="alert" hidden></div>
  ${field({ name: 'name', label: 'Name', value: service?.name, required: true, hint: `Shown in the console and on the home page; at most ${MAX_NAME_LENGTH} characters.` })}
  ${field({ name: 'path', label: 'Path', value: service?.path, required: true, placeholder: '/grafana', hint: 'The public path prefix, such as /grafana: segments of letters, digits and . _ ~ -, no trailing slash, not under /auth, /api or /dashboard. With hosts, the prefix on each of them, usually /.' })}
  ${field({
    name: 'hosts',
    label: 'Hosts',
    value: service?.hosts?.join('\n'),
    multiline: true,
    placeholder: 'grafana.example.com\n*.apps.example.com',
    hint: `Optional: the host names the service is reached on, one per line or separated by commas, up to ${MAX_HOSTS}. A host named here serves only the services that name it; *. as the first label stands for any one label. Empty: the service is reached by its path on every host no service names.`,
  })}
  ${field({
    name: 'targets',
    label: 'Target URLs',
    value: service?.targets.map(targetLine).join('\n'),
    required: true,
    multiline: true,
    placeholder: 'http://10.0.0.5:3000\nhttp://10.0.0.6:3000 2',
    hint: `Where requests are forwarded, one target per line: an http: or https: URL (h2c: for a gRPC target in cleartext HTTP/2), optionally with a base path, then optionally a space and its weight, 1 to ${MAX_WEIGHT} (default 1): its share of the requests. Up to ${MAX_TARGETS} targets; the first is the service’s target URL.`,
  })}
  ${field({ name: 'description', label: 'Description', value: service?.description, multiline: true, prose: true, hint: `Optional; at most ${MAX_DESCRIPTION_LENGTH} characters.` })}
  <div class="field checkbox">
    <input type="checkbox" id="requireAuth" name="requireAuth"${service?.requireAuth === false ? '' : ' checked'} aria-describedby="requireAuth-hint requireAuth-error">
    <label for="requireAuth">Sign-in required</label>
    <p class="hint" id="requireAuth-hint">Visitors must sign in before a request is forwarded; the upstream receives X-Forwarded-User and X-Forwarded-Email.</p>
    <p class="field-error" id="requireAuth-error" data-error-for="requireAuth" hidden></p>
  </div>
  <fieldset class="policy" name="access" aria-describedby="access-hint access-error">
    <legend>Who may use it</legend>
    <p class="hint" id="access-hint">Only with sign-in required. A signed-in user matching any entry below may use the service; others get 403 Access denied. Leave all four empty to let every signed-in user in. One entry per line.</p>
    <p class="field-error" id="access-error" data-error-for="access" hidden></p>
    ${POLICY_LISTS.map(({ key, label }) => policyField(key, label, service?.access?.[key] ?? []))}
  </fieldset>
  <div class="field checkbox">
    <input type="checkbox" id="forwardAuthorization" name="forwardAuthorization"${service?.forwardAuthorization ? ' checked' : ''} aria-describedby="forwardAuthorization-hint forwardAuthorization-error">
    <label for="forwardAuthorization">Forward the caller's bearer token to the target</label>
    <p class="hint" id="forwardAuthorization-hint">For API clients signing in with a bearer token: the target receives their Authorization header. Unchecked, the gateway removes it.</p>
    <p class="field-error" id="forwardAuthorization-error" data-error-for="forwardAuthorization" hidden></p>
  </div>
  ${stepUpFields(service)}
  ${rulesFields(service)}
  ${poolFields(service)}
  <div class="buttons">
    <button type="submit" class="button">${editing ? 'Save changes' : 'Create service'}</button>
    <a class="button secondary" href="${cancel}">Cancel</a>
  </div>
</form>`;
  return consolePage(view, { title, section: editing ? 'none' : 'new-service', body, scripts: ['form-errors.js', 'service-form.js'] });
}

/** Step-up sign-in (design.md §4.18): the sign-in's most age in seconds, and the accepted acr values. */
function stepUpFields(service: TaggedService['service'] | undefined): Html {
  return html`${field({
    name: 'maxAge',
    label: 'Recent sign-in (seconds)',
    value: service?.maxAge == null ? '' : String(service.maxAge),
    placeholder: '300',
    hint: `Optional, only with sign-in required: a session whose sign-in is older than this many seconds (0 to ${MAX_STEP_UP_AGE_S}, with a minute's leeway) is sent to sign in again, then back to its page, in the same session; 0 asks the provider for a new sign-in every time. Bearer tokens get 401 insufficient_user_authentication.`,
  })}
  ${field({
    name: 'acr',
    label: 'Authentication levels (acr)',
    value: service?.acr?.join('\n'),
    multiline: true,
    placeholder: 'mfa',
    hint: `Optional, only with sign-in required: the sign-in’s acr (from the provider’s ID token) must be one of these, up to ${MAX_ACR_VALUES}, one per line; otherwise the user signs in again asking the provider for one of them.`,
  })}`;
}

/** The rules (design.md §4.18), one per line as rule-text.ts writes them, and the CORS preflights' setting. */
function rulesFields(service: TaggedService['service'] | undefined): Html {
  return html`${field({
    name: 'rules',
    label: 'Rules',
    value: service?.rules.map(ruleLine).join('\n'),
    multiline: true,
    placeholder: 'public POST /hooks/*\ndeny /internal\nrequire groups=admins /admin\nrequire maxAge=300 acr=mfa /billing',
    hint: `Optional, one rule per line, up to ${MAX_RULES}; the first that matches a request decides, others follow the settings above. A line: public, deny or require; then optionally methods such as GET,POST; for require optionally groups=, emails=, domains=, subjects= with entries separated by commas, and maxAge= (seconds) and acr= for a step-up sign-in instead of the service’s; then paths within the service, such as /hooks/* (* is any one segment). public: no sign-in needed; deny: 403 for everyone; require: sign-in, and only the users listed (anyone signed in when none are).`,
  })}
  <div class="field checkbox">
    <input type="checkbox" id="corsPreflight" name="corsPreflight"${service?.corsPreflight === 'public' ? ' checked' : ''} aria-describedby="corsPreflight-hint corsPreflight-error">
    <label for="corsPreflight">Let CORS preflights through without sign-in</label>
    <p class="hint" id="corsPreflight-hint">Browsers send OPTIONS requests without cookies before cross-origin API calls; checked, the target answers them (with Origin and Access-Control-Request-Method, and no body).</p>
    <p class="field-error" id="corsPreflight-error" data-error-for="corsPreflight" hidden></p>
  </div>`;
}

/** The pool's settings besides its targets: balancing, retries, passive and active health checks. */
function poolFields(service: TaggedService['service'] | undefined): Html {
  const loadBalancing = service?.loadBalancing ?? DEFAULT_LOAD_BALANCING;
  const outlier = service?.outlierDetection ?? DEFAULT_OUTLIER_DETECTION;
  const check = service?.healthCheck ?? null;
  const shown = check ?? DEFAULT_HEALTH_CHECK;
  return html`<div class="field">
  <label for="loadBalancing">Load balancing</label>
  <select id="loadBalancing" name="loadBalancing" aria-describedby="loadBalancing-hint loadBalancing-error">
    ${LOAD_BALANCING_METHODS.map((method) => html`<option value="${method}"${method === loadBalancing ? ' selected' : ''}>${LOAD_BALANCING_LABELS[method]}</option>`)}
  </select>
  <p class="hint" id="loadBalancing-hint">How a request picks its target among several: ${LOAD_BALANCING_METHODS.map((method) => `${LOAD_BALANCING_LABELS[method]}, ${BALANCING_HINTS[method]}`).join('; ')}.</p>
  <p class="field-error" id="loadBalancing-error" data-error-for="loadBalancing" hidden></p>
</div>
${numberField({ name: 'retries', label: 'Retries', value: service?.retries ?? DEFAULT_RETRIES, range: [0, MAX_RETRIES], hint: 'At most this many tries on another target for a request that reached one and failed there (502, 503, 504 or a reset), if its method is idempotent and it streamed no body. A request that never reached its target is always tried on another.' })}
<fieldset class="pool-settings" name="outlierDetection" aria-describedby="outlierDetection-hint outlierDetection-error">
  <legend>Passive health checks (outlier detection)</legend>
  <p class="hint" id="outlierDetection-hint">Always on. Failed connections and 502, 503 and 504 answers count against a target: that many failures within the window take it out of rotation for the ejection time, doubled on each repeat. The last target left is never taken out.</p>
  <p class="field-error" id="outlierDetection-error" data-error-for="outlierDetection" hidden></p>
  <div class="field-row">
    ${outlierField('maxFails', 'Failures', outlier)}
    ${outlierField('windowSeconds', 'Window, seconds', outlier)}
    ${outlierField('ejectSeconds', 'Ejection, seconds', outlier)}
  </div>
</fieldset>
<fieldset class="pool-settings" name="healthCheck" aria-describedby="healthCheck-hint healthCheck-error">
  <legend>Active health checks</legend>
  <div class="field checkbox">
    <input type="checkbox" id="healthCheckEnabled" name="healthCheckEnabled"${check ? ' checked' : ''} aria-describedby="healthCheck-hint">
    <label for="healthCheckEnabled">Probe each target</label>
  </div>
  <p class="hint" id="healthCheck-hint">Each proxy process sends GET to the health endpoint of every target at the interval; a target failing that many probes in a row takes no traffic until it passes that many again. Unchecked: no probes, and the settings below are not saved.</p>
  <p class="field-error" id="healthCheck-error" data-error-for="healthCheck" hidden></p>
  ${field({ name: 'healthCheck.path', label: 'Health endpoint', value: shown.path, hint: 'Requested on each target, relative to its base path, such as /healthz: starts with /, no query.' })}
  <div class="field-row">
    ${healthCheckField('intervalSeconds', 'Interval, seconds', shown, 'Between probes of a target.')}
    ${healthCheckField('timeoutMs', 'Timeout, milliseconds', shown, 'Below the interval.')}
    ${healthCheckField('healthyThreshold', 'Healthy after, probes', shown, 'Passing in a row.')}
    ${healthCheckField('unhealthyThreshold', 'Unhealthy after, probes', shown, 'Failing in a row.')}
  </div>
  ${field({ name: 'healthCheck.expectStatus', label: 'Expected status', value: String(shown.expectStatus), hint: 'A passing probe’s status: one such as 200, or a class such as 2xx.' })}
</fieldset>`;
}

/** A target as a line of the targets' textarea: its url, then its weight unless 1. */
const targetLine = ({ url, weight }: ServiceTarget): string => (weight === 1 ? url : `${url} ${weight}`);

/** One number of outlier detection, named as the API's `fields` name it (`outlierDetection.maxFails`). */
const outlierField = (key: keyof OutlierDetection, label: string, values: OutlierDetection): Html =>
  numberField({ name: `outlierDetection.${key}`, label, value: values[key], range: OUTLIER_DETECTION_RANGES[key] });

/** One number of the active health checks, named as the API's `fields` name it (`healthCheck.timeoutMs`). */
const healthCheckField = (key: keyof typeof HEALTH_CHECK_RANGES, label: string, values: HealthCheck, hint: string): Html =>
  numberField({ name: `healthCheck.${key}`, label, value: values[key], range: HEALTH_CHECK_RANGES[key], hint });

/** A labelled whole-number input within `range`, the range said in its hint. */
function numberField(o: { name: string; label: string; value: number; range: readonly [number, number]; hint?: string }): Html {
  const [min, max] = o.range;
  return html`<div class="field">
  <label for="${o.name}">${o.label}</label>
  <input id="${o.name}" name="${o.name}" type="number" inputmode="numeric" min="${min}" max="${max}" step="1" value="${o.value}" aria-describedby="${o.name}-hint ${o.name}-error">
  <p class="hint" id="${o.name}-hint">${o.hint ? `${o.hint} ` : ''}${min} to ${max}.</p>
  <p class="field-error" id="${o.name}-error" data-error-for="${o.name}" hidden></p>
</div>`;
}

interface FieldOptions {
  name: string;
  label: string;
  value: string | undefined;
  hint: string;
  required?: boolean;
  type?: string;
  placeholder?: string;
  multiline?: boolean;
  /** Free text (a description): the browser may complete and spell-check it. */
  prose?: boolean;
}

/** One list of the access policy: a labelled textarea, one entry per line, named as the API's `fields` name it. */
function policyField(key: keyof AccessPolicy, label: string, entries: string[]): Html {
  const id = `access-${key}`;
  return html`<div class="field">
  <label for="${id}">${label}</label>
  <textarea id="${id}" name="access.${key}" rows="3" autocomplete="off" spellcheck="false" aria-describedby="${id}-hint ${id}-error">${entries.join('\n')}</textarea>
  <p class="hint" id="${id}-hint">${POLICY_HINTS[key]}</p>
  <p class="field-error" id="${id}-error" data-error-for="access.${key}" hidden></p>
</div>`;
}

/** A labelled input with its hint and the slot for the API's message about it. */
function field(o: FieldOptions): Html {
  const described = `${o.name}-hint ${o.name}-error`;
  const control = o.multiline
    ? html`<textarea id="${o.name}" name="${o.name}" rows="3"${o.required ? ' required' : ''}
    ${o.placeholder ? html`placeholder="${o.placeholder}"` : ''}${o.prose ? '' : html` autocomplete="off" spellcheck="false"`} aria-describedby="${described}">${o.value ?? ''}</textarea>`
    : html`<input id="${o.name}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"${o.required ? ' required' : ''}
    ${o.placeholder ? html`placeholder="${o.placeholder}"` : ''} autocomplete="off" spellcheck="false" aria-describedby="${described}">`;
  return html`<div class="field">
  <label for="${o.name}">${o.label}${o.required ? html` <span class="required">(required)</span>` : ''}</label>
  ${control}
  <p class="hint" id="${o.name}-hint">${o.hint}</p>
  <p class="field-error" id="${o.name}-error" data-error-for="${o.name}" hidden></p>
</div>`;
}
