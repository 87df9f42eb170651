import * as v from 'valibot';
import { rejectWrongParameters, type QueryFields } from '../http/query-errors.js';
import { TRAFFIC_RANGES, type TrafficRange } from './traffic-rollups.js';

/**
 * The query of `GET /dashboard/traffic` (interface.md §4.3): which range of the rollups, for which
 * service. Read by the dashboard's route (admin/routes/dashboard-routes.ts) and described by the
 * API's description (admin/openapi/), neither importing the other.
 */

const RANGES = Object.keys(TRAFFIC_RANGES) as TrafficRange[];

/** `range` and `serviceId`: what {@link parseTrafficQuery} checks, and what the API's description (admin/openapi/) converts. */
export const TRAFFIC_PARAMETERS = {
  range: v.optional(v.pipe(v.picklist(RANGES), v.description('1h: 60 one-minute points; 1d: 288 five-minute points')), '1h'),
  serviceId: v.optional(v.pipe(v.string(), v.uuid(), v.description('One service; without it, all services together'))),
};

/**
 * Reads `range` (`1h` or `1d`, default `1h`) and `serviceId` (a UUID; absent or empty: all services).
 * @throws {GatewayError} BAD_REQUEST naming each bad parameter.
 */
export function parseTrafficQuery(query: URLSearchParams): { range: TrafficRange; serviceId: string | undefined } {
  const range = query.get('range') || '1h';
  const serviceId = query.get('serviceId') || undefined;
  const fields: QueryFields = {};
  if (!v.is(TRAFFIC_PARAMETERS.range, range)) fields.range = `must be one of ${RANGES.join(', ')}`;
  if (!v.is(TRAFFIC_PARAMETERS.serviceId, serviceId)) fields.serviceId = 'must be a service id (a UUID)';
  rejectWrongParameters(fields);
  return { range: range as TrafficRange, serviceId };
}
