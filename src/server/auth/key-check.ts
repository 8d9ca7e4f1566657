// Every node of a farm must seal and open secrets (API secret keys, cloud passwords) with one key. The
// database keeps a value sealed by the first node to start; a node whose key cannot open it refuses to
// start, in one line, instead of failing each signature and publication later.
import { ServerConfigError } from '../config-error';
import { isServiceError } from '../service-error';
import { recordKey } from '../store/keys';
import type { Store } from '../store/port';
import type { SecretBox } from './secret-box';

const NAME = 'secret-key-check';
const PLAIN = 'appliance-forge secret key check v1';

export async function checkSecretKey(store: Store, box: SecretBox): Promise<void> {
  const key = recordKey(NAME);
  let row = await store.byKey('setting', key);
  if (!row) {
    try {
      row = await store.insert('setting', { owner: '', uniqueKey: key, doc: { name: NAME }, secret: box.seal(PLAIN) });
    } catch (e) {
      // Another node made it first.
      if (!isServiceError(e) || e.statusCode !== 409) throw e;
      row = await store.byKey('setting', key);
    }
  }
  let opened: string | undefined;
  try {
    opened = row?.secret ? box.open(row.secret) : undefined;
  } catch {
    opened = undefined;
  }
  if (opened !== PLAIN) {
    throw new ServerConfigError(`${box.file} is not the secret key of this database (${store.where}): every node of a farm needs the same key file (the first node's), given with --secret-key-file`);
  }
}
