/** The fleet scenarios of README "Running a fleet" over Redis Cluster (three primaries, three replicas on three hosts), plain TCP. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'cluster', tls: false });
