import { GatewayError } from '../../../shared/errors.js';
import { html, type Html } from '../../../shared/pages/html.js';
import type { Service } from '../../../shared/types.js';
import { parseExplainBody } from '../../explain/explain-input.js';
import type { Explanation, ExplainOutcome } from '../../explain/explanation.js';
import { explainService } from '../../explain/service-explanation.js';
import { errorNotice } from '../fragments.js';
import { ruleLine } from '../rule-text.js';
import { METHODS } from './access-log-section.js';

/**
 * "Who can reach this?" on a service's page (design.md §4.18): a form for a path, a method and a
 * caller (subject, email, groups), answered with the deciding rule and its sentence, by the same
 * explanation as `POST /api/services/:id/explain`. The form is a GET of the page itself (a
 * question that changes nothing, like the access log's filters): it works without JavaScript,
 * an answer is a link, and the page's live refresh keeps showing it. Its fields carry a `who-`
 * prefix, apart from the log filters' `path`, `method` and `user`.
 */

/** The form's fields by the question's names. */
const FIELDS = { path: 'who-path', method: 'who-method', sub: 'who-sub', email: 'who-email', groups: 'who-groups', host: 'who-host', preflight: 'who-preflight' } as const;

/** A question asked on the page, answered: the explanation, or why the question is wrong. */
export type PageExplanation = { explanation: Explanation } | { error: string };

/**
 * The answer to the question in `query` (the page's), or undefined when none was asked (no
 * `who-path`). Groups are written comma-separated; a caller with no field filled in is anonymous.
 */
export function explainFromQuery(service: Service, services: readonly Service[], query: URLSearchParams): PageExplanation | undefined {
  const path = query.get(FIELDS.path);
  if (path === null) return undefined;
  const value = (name: string) => query.get(name)?.trim() ?? '';
  const groups = value(FIELDS.groups).split(',').map((group) => group.trim()).filter((group) => group !== '');
  const caller = { sub: value(FIELDS.sub), email: value(FIELDS.email), groups };
  const signedIn = caller.sub !== '' || caller.email !== '' || groups.length > 0;
  const body = {
    path,
    ...(value(FIELDS.method) === '' ? {} : { method: value(FIELDS.method) }),
    user: signedIn ? caller : null,
    ...(value(FIELDS.host) === '' ? {} : { host: value(FIELDS.host) }),
    corsPreflight: query.get(FIELDS.preflight) === 'on',
  };
  try {
    return { explanation: explainService(service, services, parseExplainBody(body)) };
  } catch (error) {
    if (error instanceof GatewayError) return { error: error.message };
    throw error;
  }
}

/** The panel: the form, filled in with the question asked, and its answer below it. */
export function explainPanel(service: Service, query: URLSearchParams, answer: PageExplanation | undefined): Html {
  const value = (name: string) => query.get(name) ?? '';
  const action = `/dashboard/services/${service.id}`;
  const hosts = service.hosts ?? [];
  return html`<section class="explain" id="who-can-reach" aria-labelledby="explain-heading">
<h2 id="explain-heading">Who can reach this?</h2>
<p class="hint">Which rule decides a request, and why, as the gateway would decide it. Leave the caller empty for a request without sign-in.</p>
<form class="filters" method="get" action="${action}#who-can-reach" data-explain-form>
  <div class="field"><label for="who-path">Request path</label>
    <input id="who-path" name="${FIELDS.path}" value="${value(FIELDS.path)}" required placeholder="${service.path === '/' ? '/admin' : `${service.path}/admin`}" spellcheck="false"></div>
  <div class="field"><label for="who-method">Request method</label>
    <input id="who-method" name="${FIELDS.method}" list="who-methods" value="${value(FIELDS.method)}" autocomplete="off" size="8" placeholder="GET">
    <datalist id="who-methods">${METHODS.map((m) => html`<option value="${m}">`)}</datalist></div>
  <div class="field"><label for="who-sub">Subject</label>
    <input id="who-sub" name="${FIELDS.sub}" value="${value(FIELDS.sub)}" autocomplete="off" spellcheck="false"></div>
  <div class="field"><label for="who-email">Email</label>
    <input id="who-email" name="${FIELDS.email}" type="email" value="${value(FIELDS.email)}" autocomplete="off"></div>
  <div class="field"><label for="who-groups">Groups</label>
    <input id="who-groups" name="${FIELDS.groups}" value="${value(FIELDS.groups)}" autocomplete="off" placeholder="staff, admins"></div>
  ${hosts.length > 0 ? html`<div class="field"><label for="who-host">Host</label>
    <input id="who-host" name="${FIELDS.host}" value="${value(FIELDS.host)}" list="who-hosts" autocomplete="off" placeholder="${hosts[0]!}">
    <datalist id="who-hosts">${hosts.map((host) => html`<option value="${host}">`)}</datalist></div>` : ''}
  ${service.corsPreflight === 'public' ? html`<div class="field checkbox"><input id="who-preflight" type="checkbox" name="${FIELDS.preflight}"${value(FIELDS.preflight) === 'on' ? ' checked' : ''}>
    <label for="who-preflight">A CORS preflight (OPTIONS)</label></div>` : ''}
  <div class="field buttons"><button type="submit" class="button">Explain</button></div>
</form>
${answer === undefined ? '' : answerOf(answer)}
</section>`;
}

/** How an outcome reads on the page, and whether it lets the request through. */
const OUTCOMES: Record<ExplainOutcome, { label: string; passes: boolean }> = {
  public: { label: 'Public', passes: true },
  allowed: { label: 'Allowed', passes: true },
  'sign-in required': { label: 'Sign-in required', passes: false },
  refused: { label: 'Refused (403)', passes: false },
  deny: { label: 'Denied (403)', passes: false },
  disabled: { label: 'Disabled (503)', passes: false },
  elsewhere: { label: 'Not this service', passes: false },
};

function answerOf(answer: PageExplanation): Html {
  if ('error' in answer) return errorNotice(answer.error);
  const { explanation: e } = answer;
  const outcome = OUTCOMES[e.outcome];
  return html`<div class="explanation" data-explanation data-outcome="${e.outcome}" role="status">
<p><span class="badge ${outcome.passes ? 'on' : 'off'}">${outcome.label}</span> <code>${e.method} ${e.path}</code></p>
${e.rule === undefined ? '' : html`<p>Deciding rule: <code data-deciding-rule>${ruleLine(e.rule)}</code> (rule ${e.rule.index + 1})</p>`}
<p data-reason>${e.reason}</p>
<p class="hint">Routing key: <code>${e.routingKey}</code></p>
</div>`;
}
