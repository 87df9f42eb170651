/** The fleet scenarios of README "Running a fleet" over Redis Sentinel (a primary, two replicas, three Sentinels on three hosts), every process talking to Redis over mutual TLS with a password. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'sentinel', tls: true });
