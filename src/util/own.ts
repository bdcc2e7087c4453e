/**
 * A record's own value for `key`, never an inherited one: a client's or a user's string used as a
 * key into a plain object finds `toString`, `constructor` and `__proto__` on Object.prototype.
 */
export function own<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
