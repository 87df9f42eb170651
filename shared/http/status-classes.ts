/**
 * The classes of HTTP statuses (RFC 9110 §15), named by their first digit: what the access log's
 * rollups count requests by, and what an active health check may expect instead of one status.
 */
export const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** One of {@link STATUS_CLASSES}: `"1xx"` to `"5xx"`. */
export type StatusClass = (typeof STATUS_CLASSES)[number];
