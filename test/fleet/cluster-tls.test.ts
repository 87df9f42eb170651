/** The fleet scenarios of issue 22 §2 over Redis Cluster (three primaries, three replicas on three hosts), every process talking to Redis over mutual TLS with a password. */
import { fleetSuite } from './support/fleet-suite.js';

fleetSuite({ redis: 'cluster', tls: true });
