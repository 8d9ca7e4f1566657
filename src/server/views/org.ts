// The one organization of the reference server, `orgs/1`, to which every user belongs (wire contract §10, Decision).
import type { Org } from '../../model/resources';
import type { Ctx } from '../context';
import { uris } from '../uris';

export const DEFAULT_ORG_ID = 1;

export function defaultOrg(ctx: Ctx): Org {
  const created = new Date(0).toISOString();
  return { created, dbId: DEFAULT_ORG_ID, lastModified: created, activateNewUsers: true, defaultOrg: true, name: 'default', uri: uris.org(DEFAULT_ORG_ID), digest: `org-${ctx.version}` };
}
