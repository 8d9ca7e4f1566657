// A user and its API key pairs as answered (wire contract §4): the secret key and the key's scope never.
import type { ApiKeyPair, User } from '../../model/resources';
import { uriOf } from '../../model/uris';
import type { UserRow } from '../store/docs';
import type { Row } from '../store/port';
import { DEFAULT_ORG_ID } from './org';
import { stamp, type Located } from './stamp';
import { uris } from '../uris';

export function userView(u: UserRow): Located<User> {
  const ids = { uid: u.login };
  const { consoleEpoch: _epoch, ...doc } = u.doc;
  return stamp(u, {
    loginName: u.login,
    active: true,
    ...doc,
    admin: u.admin,
    baseApiKeysUri: uriOf('apiKey_getAll', ids),
    baseAppliancesUri: uriOf('appliance_getAll', ids),
    baseCredAccountsUri: uriOf('cloudAccount_getAll', ids),
    baseTargetFormatsUri: uriOf('userTargetFormat_getAll', ids),
    baseImagesUri: uriOf('userMachineImage_getAll', ids),
    baseMySoftwareLibraryUri: uriOf('mySoftware_getAll', ids),
    basePublishImagesUri: uriOf('userMachineImagePublished_getAll', ids),
    orgUris: [uris.org(DEFAULT_ORG_ID)],
    uri: uriOf('user_get', ids),
  });
}

export function apiKeyView(r: Row<'apikey'>): Located<ApiKeyPair> {
  // The scope is the reference server's own (no field for it in uforge.xsd): not in the document.
  const { scope: _scope, ...d } = r.doc;
  return stamp(r, { ...d, uri: uris.apikey(r.owner, r.id) });
}
