/** The fleet scenarios of issue 22 §2 over Redis Sentinel (a primary, two replicas, three Sentinels on three hosts), plain TCP. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'sentinel', tls: false });
