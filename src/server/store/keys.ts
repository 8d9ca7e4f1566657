// The unique key of a record (name and version, an account's name): the JSON array of its parts.
// Unambiguous whatever a part holds, and never a U+0000, which node:sqlite cuts a bound string at
// (a NUL-joined key kept only the name, so two versions of one name collided).
export const recordKey = (...parts: readonly string[]): string => JSON.stringify(parts);

/** The key of a record kept by name and version (software, appliances). */
export const nameVersionKey = (d: { name: string; version: string }): string => recordKey(d.name, d.version);

/** An account's key: its name, whatever its case. */
export const accountKey = (name: string): string => recordKey(name.toLowerCase());
