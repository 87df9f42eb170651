import type { RegistryPlan } from '../registry/registry-document.js';
import { textTable } from './text-table.js';

/**
 * A registry plan (design.md §4.9) as the CLI prints it: one row per service created, updated or
 * deleted, in that order, with each changed field of an update on a line of its own
 * (`targetUrl: "http://a" → "http://b"`, values as JSON), then a summary line. Unchanged services
 * are only counted. `applied` words the summary as done rather than to do.
 */
export function planTable(plan: RegistryPlan, applied: boolean): string {
  const rows: string[][] = [];
  for (const item of plan.create) rows.push(['create', item.path, item.service.name, '']);
  for (const item of plan.update) {
    const changes = Object.entries(item.changes).map(([field, change]) => `${field}: ${JSON.stringify(change.before)} → ${JSON.stringify(change.after)}`);
    changes.forEach((change, i) => rows.push(i === 0 ? ['update', item.path, item.name, change] : ['', '', '', change]));
  }
  for (const item of plan.delete) rows.push(['delete', item.path, item.name, '']);
  const [create, update, remove, unchanged] = [plan.create.length, plan.update.length, plan.delete.length, plan.unchanged.length];
  if (create + update + remove === 0) return `No changes: ${servicesCount(unchanged)} as declared.\n`;
  const summary = applied
    ? `${create} created, ${update} updated, ${remove} deleted, ${unchanged} unchanged.`
    : `${create} to create, ${update} to update, ${remove} to delete, ${unchanged} unchanged.`;
  return `${textTable([['ACTION', 'PATH', 'NAME', 'CHANGES'], ...rows])}\n${summary}\n`;
}

const servicesCount = (count: number): string => `${count} ${count === 1 ? 'service' : 'services'}`;
