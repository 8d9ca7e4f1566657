// CloudAccount: an OpenStack account kept by the service (wire contract §9), for sharing one account
// between publications. The password is write-only on the service: drift in it cannot be seen, so a new
// password is always sent on update.
import { openStackAccountBody, type OpenStackAccountInput } from '../../src/engine/publication-body';
import { fiql } from '../../src/fiql/builder';
import type { CredAccount } from '../../src/model/resources';
import { uriParams } from '../../src/model/uris';
import { shapes } from '../shapes';
import { checkAccountFields } from './account';
import { withOutputs, type CommonInputs, type Handler } from './handler';
import { ProviderError } from './errors';
import { created, deleteIfThere, unlessGone } from './service-answers';

export interface CloudAccountInputs extends OpenStackAccountInput, CommonInputs { name: string }

const ids = (uri: string) => uriParams('cloudAccount_get', uri);

export const cloudAccount: Handler<CloudAccountInputs> = {
  inputs: shapes.cloudAccount.inputs,
  replaceOn: ['name'],
  identity: ['name'],

  check(r) {
    const fields = checkAccountFields(r);
    if (fields.name === undefined) r.fail('name', 'name is required');
    return { ...fields };
  },

  async create(client, inputs) {
    const { name } = inputs;
    let acc: CredAccount | undefined;
    if (inputs.adopt === true) {
      const list = await client.cloudAccount_getAll({ params: { query: fiql.eq('name', name) } });
      const found = (list.credAccounts ?? []).find((a) => a.name === name && a.uri);
      if (found?.uri) {
        acc = await client.cloudAccount_update({ ...ids(found.uri), body: openStackAccountBody({ ...inputs, uri: found.uri }) });
        acc.uri ??= found.uri;
      }
    }
    // The account's fields only: the connection and `adopt` inputs are the provider's, not the service's.
    acc ??= await created(`cloud account ${name}`, client.cloudAccount_create({ body: openStackAccountBody(inputs) }));
    if (!acc.uri) throw new ProviderError('service', `the service returned no uri for cloud account ${name}`);
    return { id: acc.uri, outs: withOutputs('cloudAccount', inputs, { uri: acc.uri }) };
  },

  async read(client, id, props) {
    const acc = await unlessGone(client.cloudAccount_get(ids(id)));
    if (!acc) return undefined;
    const now = {
      ...props,
      name: acc.name ?? props.name,
      keystoneUrl: acc.keystoneUrl ?? props.keystoneUrl,
      glanceUrl: acc.glanceUrl ?? props.glanceUrl,
      login: acc.login ?? props.login,
    };
    return withOutputs('cloudAccount', now, { uri: acc.uri ?? id });
  },

  async update(client, id, _olds, news) {
    await client.cloudAccount_update({ ...ids(id), body: openStackAccountBody({ ...news, uri: id }) });
    return withOutputs('cloudAccount', news, { uri: id });
  },

  async delete(client, id) {
    await deleteIfThere(client.cloudAccount_delete(ids(id)));
  },
};
