/** The fleet scenarios of issue 22 §2 over Redis Cluster (three primaries, three replicas on three hosts), plain TCP. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'cluster', tls: false });
