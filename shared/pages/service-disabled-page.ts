import { html } from './html.js';
import type { Service } from '../types.js';
import { page } from './layout.js';

/**
 * The page of a disabled service's 503 for a person (design.md §3.4, §5): the service is turned
 * off rather than broken. Names it by its path, which the visitor typed anyway; its name may be
 * internal.
 */
export function serviceDisabledPage(service: Service): string {
  return page(
    'Service disabled',
    html`<h1>Service disabled</h1>
<p class="error" role="alert">The service at <code>${service.path}</code> is turned off.</p>
<p>An administrator has disabled it for now. Try again later, or ask them to enable it.</p>
<p><a class="button secondary" href="/">Home</a></p>`,
  );
}
