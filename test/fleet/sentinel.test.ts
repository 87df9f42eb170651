/** The fleet scenarios of README "Running a fleet" over Redis Sentinel (a primary, two replicas, three Sentinels on three hosts), plain TCP. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'sentinel', tls: false });
