/** Length in code points, so a name with an emoji lines up as well as a terminal allows. */
const width = (text: string): number => [...text].length;

/**
 * `rows` (the first the heading) as left-aligned columns two spaces apart, without trailing
 * spaces, each row a line ending in `\n`: the CLI's tables (plan-table.ts, local-tokens.ts).
 */
export function textTable(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => width(row[column]!))));
  const line = (row: string[]) => row.map((cell, column) => cell + ' '.repeat(widths[column]! - width(cell) + 2)).join('').trimEnd();
  return rows.map(line).join('\n') + '\n';
}
