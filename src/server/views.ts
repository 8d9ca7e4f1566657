// From stored rows to model records: the base fields every record carries (wire contract §2:
// created, dbId, digest, lastModified) and the URIs of each resource (spec "Resource URIs").
import { createHash } from 'node:crypto';

export interface Stamped {
  id: number;
  created: string;
  modified: string;
}

/**
 * Add the base fields. `digest` hashes everything else the record shows, so the ETag changes
 * whenever any field of the answer does (wire contract §6).
 */
export function stamp<T extends object>(row: Stamped, value: T): T & { dbId: number; created: string; lastModified: string; digest: string } {
  const v = { ...value, dbId: row.id, created: row.created, lastModified: row.modified };
  const digest = createHash('sha256').update(JSON.stringify(v)).digest('base64url').slice(0, 27);
  return { ...v, digest };
}

export const uris = {
  user: (uid: string) => `users/${uid}`,
  account: (uid: string, id: number) => `users/${uid}/accounts/${id}`,
  apikey: (uid: string, id: number) => `users/${uid}/apikeys/${id}`,
  appliance: (uid: string, aid: number) => `users/${uid}/appliances/${aid}`,
  osprofile: (uid: string, aid: number, osid: number) => `users/${uid}/appliances/${aid}/osprofile/${osid}`,
  software: (uid: string, msid: number) => `users/${uid}/mysoftware/${msid}`,
  artifact: (uid: string, msid: number, said: number) => `users/${uid}/mysoftware/${msid}/artifacts/${said}`,
  image: (uid: string, aid: number, itid: number) => `users/${uid}/appliances/${aid}/images/${itid}`,
  pimage: (uid: string, aid: number, itid: number, pid: number) => `users/${uid}/appliances/${aid}/images/${itid}/pimages/${pid}`,
  distribution: (id: number) => `distributions/${id}`,
  org: (id: number) => `orgs/${id}`,
};

/** A numeric path id, or 404 as if the record did not exist. */
export function idParam(v: string | undefined): number {
  return v !== undefined && /^\d{1,15}$/.test(v) ? Number(v) : -1;
}
