import type { ServiceRule } from '../../shared/types.js';

/**
 * The answer to "who can reach this?" (design.md §4.18), as `POST /api/services/:id/explain`
 * returns it and the console's service page shows it (service-explanation.ts makes it).
 */

/** What happens to the request. */
export type ExplainOutcome = 'elsewhere' | 'public' | 'deny' | 'sign-in required' | 'allowed' | 'refused' | 'disabled';

/** Which part decides: another route, a rule, the service's CORS preflight setting, or the service's own settings. */
export type DecidedBy = 'routing' | 'rule' | 'corsPreflight' | 'service';

/** The deciding rule as the service holds it, with its index in `rules` (from 0). */
export type ExplainedRule = ServiceRule & { index: number };

/** The answer of `POST /api/services/:id/explain`. */
export interface Explanation {
  /** The method asked about, in capitals. */
  method: string;
  /** The path asked about, without its query. */
  path: string;
  /** The path's routing key, the form routing and rules compare (design.md §5). */
  routingKey: string;
  /** False when the request would not reach this service at all (see `reason`). */
  matchesService: boolean;
  /** The service the gateway routes the path to instead, when another one takes it. */
  routedTo?: { id: string; name: string; path: string };
  decidedBy: DecidedBy;
  /** With `decidedBy: 'rule'`. */
  rule?: ExplainedRule;
  outcome: ExplainOutcome;
  /** One sentence saying why. */
  reason: string;
}
