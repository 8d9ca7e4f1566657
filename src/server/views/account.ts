// A cloud account as answered (wire contract §9): no password, `secretsMissing=true` in its place.
import type { CredAccount } from '../../model/resources';
import type { AccountDoc } from '../store/docs';
import type { Row } from '../store/port';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

const PLATFORM = { name: 'OpenStack', type: 'openstack' } as const;

/** The stored account as answered, also when embedded in a publication. */
export function accountRecord(d: AccountDoc): CredAccount {
  const { kind, ...rest } = d;
  return { kind, ...rest, targetPlatform: { ...PLATFORM }, secretsMissing: true };
}

export function accountView(r: Row<'account'>): Located<CredAccount> {
  return stamp(r, { ...accountRecord(r.doc), uri: uris.account(r.owner, r.id), parentUri: uris.user(r.owner) });
}
