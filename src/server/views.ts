// From stored rows to model records: the base fields every record carries (wire contract §2:
// created, dbId, digest, lastModified) and the URIs of each resource (spec "Resource URIs").
import { createHash } from 'node:crypto';
import { uriOf } from '../model/uris';

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

/** A record as the server shows it: with its own `uri` (the `Location` of a 201). */
export type Located<T> = T & { uri: string };

/** The URI of each resource the server shows, from the operations table (src/model/uris.ts). */
export const uris = {
  user: (uid: string) => uriOf('user_get', { uid }),
  account: (uid: string, caid: number) => uriOf('cloudAccount_get', { uid, caid }),
  apikey: (uid: string, akid: number) => uriOf('apiKey_update', { uid, akid }),
  appliance: (uid: string, aid: number) => uriOf('appliance_get', { uid, aid }),
  osprofile: (uid: string, aid: number, osid: number) => uriOf('applianceOSProfile_get', { uid, aid, osid }),
  software: (uid: string, msid: number) => uriOf('mySoftware_get', { uid, msid }),
  artifact: (uid: string, msid: number, said: number) => uriOf('mySoftwareArtifact_get', { uid, msid, said }),
  image: (uid: string, aid: number, itid: number) => uriOf('machineImage_get', { uid, aid, itid }),
  distribution: (id: number) => uriOf('os_get', { id }),
  profile: (id: number, prid: number) => uriOf('osTemplate_get', { id, prid }),
  pkg: (id: number, pid: number) => uriOf('osPkg_get', { id, pid }),
  org: (oid: number) => uriOf('org_get', { oid }),
};

/** A numeric path id, or 404 as if the record did not exist. */
export function idParam(v: string | undefined): number {
  return v !== undefined && /^\d{1,15}$/.test(v) ? Number(v) : -1;
}
