import type { AccessPolicy } from '../../shared/types.js';
import { html, type Html } from '../../shared/html.js';
import type { TaggedService } from '../service-registry.js';
import { MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH } from '../service-validation.js';
import { POLICY_LISTS } from './access-policy-text.js';
import { consolePage, csrfInput, type ConsoleView } from './console-layout.js';

/** What each list of the access policy holds, under its textarea (design.md §4.7). */
const POLICY_HINTS: Record<keyof AccessPolicy, string> = {
  groups: 'Group names from the identity provider’s groups claim (OIDC_GROUPS_CLAIM), matched exactly.',
  emails: 'Email addresses, matched against the verified email in any case.',
  emailDomains: 'Domains such as example.com, without @: any verified email ending in @ and the domain, not its subdomains.',
  subjects: 'Subject identifiers (sub) from the identity provider, matched exactly.',
};

/**
 * `GET /dashboard/services/new` and `/dashboard/services/:id/edit` (design.md §4.6): the service form,
 * the access policy (design.md §4.7) as four lists of one entry per line. service-form.js sends it
 * to `POST /api/services` or `PUT /api/services/:id` and shows each of the API's per-field
 * messages (`fields` of the 400 answer, `access.emails` for a list) next to its field. An edit
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
  ${field({ name: 'path', label: 'Path', value: service?.path, required: true, placeholder: '/grafana', hint: 'The public path prefix, such as /grafana: segments of letters, digits and . _ ~ -, no trailing slash, not under /auth, /api or /dashboard.' })}
  ${field({ name: 'targetUrl', label: 'Target URL', value: service?.targetUrl, required: true, type: 'url', placeholder: 'http://10.0.0.5:3000', hint: 'Where requests are forwarded: an http: or https: URL, optionally with a base path.' })}
  ${field({ name: 'description', label: 'Description', value: service?.description, multiline: true, hint: `Optional; at most ${MAX_DESCRIPTION_LENGTH} characters.` })}
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
  <div class="buttons">
    <button type="submit" class="button">${editing ? 'Save changes' : 'Create service'}</button>
    <a class="button secondary" href="${cancel}">Cancel</a>
  </div>
</form>`;
  return consolePage(view, { title, section: editing ? 'none' : 'new-service', body, scripts: ['form-errors.js', 'service-form.js'] });
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
    ? html`<textarea id="${o.name}" name="${o.name}" rows="3" aria-describedby="${described}">${o.value ?? ''}</textarea>`
    : html`<input id="${o.name}" name="${o.name}" type="${o.type ?? 'text'}" value="${o.value ?? ''}"${o.required ? ' required' : ''}
    ${o.placeholder ? html`placeholder="${o.placeholder}"` : ''} autocomplete="off" spellcheck="false" aria-describedby="${described}">`;
  return html`<div class="field">
  <label for="${o.name}">${o.label}${o.required ? html` <span class="required">(required)</span>` : ''}</label>
  ${control}
  <p class="hint" id="${o.name}-hint">${o.hint}</p>
  <p class="field-error" id="${o.name}-error" data-error-for="${o.name}" hidden></p>
</div>`;
}
