// CloudAccount: an OpenStack account kept by the service (wire contract §9), for sharing one account
// between publications. The password is write-only on the service: drift in it cannot be seen, so a new
// password is always sent on update.
import { openStackAccountBody, type OpenStackAccountInput } from '../../src/engine/publication-body';
import { fiql } from '../../src/fiql/builder';
import { OPENSTACK_ACCOUNT_FIELDS, type CredAccount } from '../../src/model/resources';
import { deleteIfThere, existsMessage, isConflict, unlessGone, type Handler } from './handler';
import { uriParams } from '../../src/model/uris';
import { checkAccountFields } from './publication';
import type { Props } from './values';

const ids = (uri: string) => uriParams('cloudAccount_get', uri);

/** The account's fields only: the connection and `adopt` inputs are the provider's, not the service's. */
const body = (inputs: Props): CredAccount => openStackAccountBody(inputs as unknown as OpenStackAccountInput);

export const cloudAccount: Handler = {
  inputs: ['name', ...OPENSTACK_ACCOUNT_FIELDS, 'connection', 'adopt'],
  replaceOn: ['name'],
  identity: ['name'],

  check(r) {
    const fields = checkAccountFields(r);
    if (fields.name === undefined) r.fail('name', 'name is required');
    return { ...fields };
  },

  async create(client, inputs) {
    const name = inputs.name as string;
    let acc: CredAccount | undefined;
    if (inputs.adopt === true) {
      const list = await client.cloudAccount_getAll({ params: { query: fiql.eq('name', name) } });
      const found = (list.credAccounts ?? []).find((a) => a.name === name && a.uri);
      if (found?.uri) {
        const { uid, caid } = ids(found.uri);
        acc = await client.cloudAccount_update({ uid, caid, body: { ...body(inputs), uri: found.uri } });
        acc.uri ??= found.uri;
      }
    }
    if (!acc) {
      try {
        acc = await client.cloudAccount_create({ body: body(inputs) });
      } catch (e) {
        if (isConflict(e)) throw new Error(existsMessage(`cloud account ${name}`));
        throw e;
      }
    }
    if (!acc.uri) throw new Error(`the service returned no uri for cloud account ${name}`);
    return { id: acc.uri, outs: { ...inputs, uri: acc.uri } };
  },

  async read(client, id, props) {
    const { uid, caid } = ids(id);
    const acc = await unlessGone(client.cloudAccount_get({ uid, caid }));
    if (!acc) return undefined;
    return {
      ...props,
      name: acc.name ?? props.name,
      keystoneUrl: acc.keystoneUrl ?? props.keystoneUrl,
      glanceUrl: acc.glanceUrl ?? props.glanceUrl,
      login: acc.login ?? props.login,
      uri: acc.uri ?? id,
    };
  },

  async update(client, id, _olds, news) {
    const { uid, caid } = ids(id);
    await client.cloudAccount_update({ uid, caid, body: { ...body(news), uri: id } });
    return { ...news, uri: id };
  },

  async delete(client, id) {
    const { uid, caid } = ids(id);
    await deleteIfThere(client.cloudAccount_delete({ uid, caid }));
  },
};
