// Freezing a JSON-like value all the way down: the configuration (read once, never changed) and records a
// handler hands out on every call (the HTTP layer keeps the JSON text of a frozen reply, http/send.ts).
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
