// Publication: a generated image registered in an OpenStack cloud (wire contract §8–9). Created by publishing
// and waiting; its output `cloudId` is the Glance image id. The account's password and login may change in
// place (a rotation must not re-upload the image); where it goes (URLs, domain, project, name) replaces.
import type { Client } from '../../src/client';
import { publishImageBody, type OpenStackAccountInput } from '../../src/engine/publication-body';
import { isForgeError, messageOf } from '../../src/errors';
import { HTTP_URL_PATTERN } from '../../src/model/field-rules';
import type { PublishImage } from '../../src/model/resources';
import { deleteIfThere, unlessGone, type Handler } from './handler';
import { uriOf, uriParams, uriPattern, uriShapeText } from '../../src/model/uris';
import { DEFAULT_TIMEOUT_S } from './machine-image';
import { isUnknown, type Inputs, type Props } from './values';

const IMAGE_URI = uriPattern('machineImage_get');

/** The `account` object, shared with CloudAccount. */
export function checkAccountFields(a: Inputs): OpenStackAccountInput {
  return {
    name: a.string('name'),
    keystoneUrl: a.string('keystoneUrl', { required: true, pattern: HTTP_URL_PATTERN, hint: 'must be an http(s) URL, e.g. http://keystone:5000/v3' }) ?? '',
    glanceUrl: a.string('glanceUrl', { pattern: HTTP_URL_PATTERN, hint: 'must be an http(s) URL, e.g. http://glance:9292' }),
    login: a.string('login', { required: true }) ?? '',
    password: a.string('password', { required: true }) ?? '',
    keystoneVersion: a.string('keystoneVersion', { default: 'v3', pattern: /^v3$/, hint: 'must be v3 (identity v3 is the one supported)' }),
  };
}


function outputs(inputs: Props, p: PublishImage): Props {
  return { ...inputs, uri: p.uri, cloudId: p.cloudId };
}

export const publication: Handler = {
  inputs: ['image', 'appliance', 'account', 'keystoneDomain', 'keystoneProject', 'displayName', 'publicImage', 'timeout', 'connection', 'adopt'],
  replaceOn: ['image', 'appliance', 'keystoneDomain', 'keystoneProject', 'displayName', 'publicImage'],
  replaceOnMembers: { account: ['keystoneUrl', 'glanceUrl'] },
  identity: [],

  check(r) {
    const image = r.string('image', { required: true, pattern: IMAGE_URI, hint: `must be a MachineImage URI ${uriShapeText('machineImage_get')}` });
    let appliance = r.string('appliance', { pattern: uriPattern('appliance_get'), hint: `must be an Appliance URI ${uriShapeText('appliance_get')}` });
    // The image URI names its appliance; an explicit one must agree.
    const named = image && !isUnknown(image) ? uriParams('machineImage_get', image) : undefined;
    const implied = named ? uriOf('appliance_get', named) : undefined;
    if (appliance === undefined) appliance = implied;
    else if (implied && !isUnknown(appliance) && appliance !== implied) {
      r.fail('appliance', `appliance ${appliance} is not the appliance of image ${image}`);
    }
    return {
      image,
      appliance,
      account: r.object('account', checkAccountFields, { required: true }),
      keystoneDomain: r.string('keystoneDomain', { default: 'Default' }),
      keystoneProject: r.string('keystoneProject', { required: true }),
      displayName: r.string('displayName', { required: true }),
      publicImage: r.boolean('publicImage', false),
      timeout: r.integer('timeout', { min: 1, max: 7 * 24 * 3600, default: DEFAULT_TIMEOUT_S, unit: 'seconds' }),
    };
  },

  async create(client, inputs) {
    const { uid, aid, itid } = uriParams('machineImage_get', inputs.image as string);
    const a = inputs.account as OpenStackAccountInput;
    let p = inputs.adopt === true ? await findExisting(client, inputs) : undefined;
    p ??= await client.applianceImage_publish({
      uid, aid, itid,
      body: publishImageBody({
        imageUri: inputs.image as string,
        account: a,
        keystoneDomain: inputs.keystoneDomain as string,
        keystoneProject: inputs.keystoneProject as string,
        displayName: inputs.displayName as string,
        publicImage: inputs.publicImage as boolean,
      }),
    });
    if (!p.uri) throw new Error('the service returned no uri for the publication');
    const timeoutS = inputs.timeout as number;
    try {
      await client.waitForJob(p, { timeoutMs: timeoutS * 1000, pollMs: 500, maxPollMs: 5000 });
    } catch (e) {
      const why = isForgeError(e, 'E_WAIT_TIMEOUT') ? `did not finish within ${timeoutS} s (raise \`timeout\`)` : messageOf(e);
      await removePublication(client, p.uri).catch(() => undefined);
      throw new Error(`publication of ${inputs.image as string} failed: ${why}`);
    }
    const done = await client.getByUri('publishImage', p.uri);
    return { id: p.uri, outs: outputs(inputs, done) };
  },

  async read(client, id, props) {
    const p = await unlessGone(client.getByUri('publishImage', id));
    if (!p || p.status?.error === true || p.status?.cancelled === true) return undefined;
    return {
      ...outputs(props, p),
      ...(p.displayName !== undefined ? { displayName: p.displayName } : {}),
      ...(p.keystoneProject !== undefined ? { keystoneProject: p.keystoneProject } : {}),
    };
  },

  // Only credentials, `timeout`, `adopt` and connection keys reach here: state only.
  async update(_client, _id, olds, news) {
    return { ...olds, ...news };
  },

  async delete(client, id) {
    await removePublication(client, id);
  },
};

async function removePublication(client: Client, uri: string): Promise<void> {
  const { uid, aid, itid, pitid } = uriParams('machineImagePublished_get', uri);
  await deleteIfThere(client.machineImagePublished_delete({ uid, aid, itid, pitid }));
}

/** A publication of that image under that name that did not fail, for `adopt`. */
async function findExisting(client: Client, inputs: Props): Promise<PublishImage | undefined> {
  const { uid, aid } = uriParams('machineImage_get', inputs.image as string);
  const list = await client.machineImagePublished_getAll({ uid, aid });
  return (list.publishImages ?? []).find(
    (p) => p.uri && p.imageUri === inputs.image && p.displayName === inputs.displayName && p.status?.error !== true && p.status?.cancelled !== true,
  );
}
