/** design.md §4.19: the verify endpoint as the auth decision of Debian's HAProxy (a Lua action with core.httpclient). */
import { describeIngress } from '../support/ingress-scenarios.js';
import { startHaproxy } from '../support/ingress-servers.js';

describeIngress('HAProxy (a Lua action with core.httpclient)', startHaproxy);
