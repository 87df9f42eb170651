/** design.md §4.19: the verify endpoint as the auth decision of Debian's Caddy (forward_auth). */
import { describeIngress } from '../support/ingress-scenarios.js';
import { startCaddy } from '../support/ingress-servers.js';

describeIngress('Caddy (forward_auth)', startCaddy);
