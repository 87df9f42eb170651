import { html } from './html.js';
import { page } from './layout.js';

/**
 * The page of a 503 for a person (design.md §5 "backend unavailable"): the gateway, or what it
 * depends on (its session store, the identity provider), cannot answer right now. `message` is
 * the error's own (shared/errors.ts), which names no internals.
 */
export function unavailablePage(message: string): string {
  return page(
    'Temporarily unavailable',
    html`<h1>Temporarily unavailable</h1>
<p class="error" role="alert">${message}.</p>
<p>This should not last: try again in a moment. If it does, tell whoever runs this gateway.</p>`,
  );
}
