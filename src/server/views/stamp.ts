// The base fields every record the server shows carries (wire contract §2: created, dbId, digest,
// lastModified), added to a stored row's view.
import { createHash } from 'node:crypto';

export interface Stamped {
  id: number;
  created: string;
  modified: string;
}

/** A record as the server shows it: with its own `uri` (the `Location` of a 201). */
export type Located<T> = T & { uri: string };

/**
 * Add the base fields. `digest` hashes everything else the record shows, so the ETag changes
 * whenever any field of the answer does (wire contract §6).
 */
export function stamp<T extends object>(row: Stamped, value: T): T & { dbId: number; created: string; lastModified: string; digest: string } {
  const v = { ...value, dbId: row.id, created: row.created, lastModified: row.modified };
  const digest = createHash('sha256').update(JSON.stringify(v)).digest('base64url').slice(0, 27);
  return { ...v, digest };
}
