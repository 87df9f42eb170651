/** design.md §4.19: the verify endpoint as the auth decision of Debian's nginx (auth_request). */
import { describeIngress } from '../support/ingress-scenarios.js';
import { startNginx } from '../support/ingress-servers.js';

describeIngress('nginx (auth_request)', startNginx);
