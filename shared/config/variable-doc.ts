/** A variable: its default (undefined: unset) and what it means. The README configuration table mirrors these. */
export interface VariableDoc {
  name: string;
  default: string | undefined;
  meaning: string;
}
