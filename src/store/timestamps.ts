// Timestamps as the API shows them: the drivers hand timestamptz columns back as Date (pg, PGlite) and a
// string would do too; clients always get ISO 8601 in UTC, and a missing time stays null.
export function isoTime(v: unknown): string | null {
  return v === null || v === undefined ? null : (v instanceof Date ? v : new Date(v as string)).toISOString();
}
