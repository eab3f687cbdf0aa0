// JSON merge patch (RFC 7386) of item metadata: PATCH .../items/:item_id merges its `metadata` this way.

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `target` with `patch` merged in: a null value removes the key, an object merges into an object key by key
 * (recursively), anything else (arrays included) replaces the value. Neither argument is modified. */
export function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // defineProperty, not assignment: a key named "__proto__" (valid JSON) stays a plain key.
  const put = (key: string, value: unknown) =>
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  for (const [key, value] of Object.entries(target)) put(key, value);
  for (const [key, value] of Object.entries(patch)) {
    const old = Object.hasOwn(out, key) ? out[key] : undefined;
    if (value === null) delete out[key];
    else if (isObject(value)) put(key, mergePatch(isObject(old) ? old : {}, value));
    else put(key, value);
  }
  return out;
}
