import * as v from 'valibot';

/** Length in Unicode code points, so one emoji counts as one character. */
export const charCount = (text: string): number => [...text].length;

/**
 * A pipe's rule that a string has at most `max` characters ({@link charCount}), as two pipe items
 * to spread into `v.pipe`: the check, failing with `message`, and `maxLength` for the API's
 * description (admin/openapi/), since JSON Schema counts code points too where valibot's own length
 * actions count UTF-16 units.
 */
export const atMostChars = (max: number, message: string) =>
  [v.check<string, string>((text) => charCount(text) <= max, message), v.metadata<string, { maxLength: number }>({ maxLength: max })] as const;
