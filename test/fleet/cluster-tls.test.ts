/** The fleet scenarios of README "Running a fleet" over Redis Cluster (three primaries, three replicas on three hosts), every process talking to Redis over mutual TLS with a password. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'cluster', tls: true });
