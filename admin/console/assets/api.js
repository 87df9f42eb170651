// Gatehouse console: calls to the gateway's JSON API from the page.
// Every state-changing call carries the session's CSRF token in X-CSRF-Token (interface.md §5.6), read from
// <meta name="csrf-token"> unless the caller passes the token of its form's hidden input. A change
// of one service may carry the ETag the page was made with as If-Match (design.md §4.9).
(function () {
  'use strict';
  const gatehouse = (window.gatehouse = window.gatehouse || {});

  /** An answer other than 2xx, or no answer: `status` 0 when the gateway could not be reached. */
  class ApiError extends Error {
    constructor(status, message, fields) {
      super(message);
      this.name = 'ApiError';
      this.status = status;
      this.fields = fields || {};
    }
  }

  function metaToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute('content') : '';
  }

  /**
   * Sends `body` (when given) as JSON, with `ifMatch` (an ETag) as If-Match when given, and
   * resolves with the parsed answer (null for 204). Rejects with an ApiError carrying the API's
   * message and per-field reasons (status 412 when `ifMatch` no longer holds).
   */
  async function api(method, path, body, csrfToken, ifMatch) {
    const headers = { accept: 'application/json' };
    if (method !== 'GET' && method !== 'HEAD') headers['x-csrf-token'] = csrfToken || metaToken();
    if (ifMatch) headers['if-match'] = ifMatch;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch {
      throw new ApiError(0, 'The gateway could not be reached. Check the connection and try again.');
    }
    if (response.status === 204) return null;
    const data = await response.json().catch(() => null);
    if (!response.ok) throw new ApiError(response.status, describe(response.status, data), data && data.fields);
    return data;
  }

  function describe(status, data) {
    const message = data && typeof data.error === 'string' ? data.error : `The gateway answered HTTP ${status}`;
    if (status === 401) return `${message}: your session has ended. Reload the page to sign in again.`;
    return message;
  }

  gatehouse.api = api;
  gatehouse.ApiError = ApiError;
})();
