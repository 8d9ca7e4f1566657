// The URIs of the resources the server shows (spec "Resource URIs"), from the operations table
// (src/model/uris.ts), and the numeric ids read back from a path.
import { uriOf } from '../model/uris';

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
