/** The statements of bench/usage-insert-cost.ts beside the ledger's own (src/usage/usage.sql.ts). */
export const sql = {
  project: 'INSERT INTO projects (id, name) VALUES ($1, $2)',
  /** The form the ledger sent before: a VALUES list of eight parameters a row. */
  valuesList: (n: number) =>
    `INSERT INTO usage_events (project_id, key_id, endpoint, model, input_tokens, output_tokens, frames, ms) VALUES ${Array.from(
      { length: n },
      (_, r) => `(${Array.from({ length: 8 }, (_, c) => `$${r * 8 + c + 1}`).join(', ')})`,
    ).join(', ')}`,
};
