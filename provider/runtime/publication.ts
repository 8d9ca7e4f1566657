// Publication: a generated image registered in an OpenStack cloud (wire contract §8–9). Created by publishing
// and waiting; its output `cloudId` is the Glance image id. The account's password and login may change in
// place (a rotation must not re-upload the image); where it goes (URLs, domain, project, name) replaces.
import type { Client } from '../../src/client';
import { publishImageBody, type PublicationInput } from '../../src/engine/publication-body';
import type { PublishImage } from '../../src/model/resources';
import { uriOf, uriParams, uriPattern, uriShapeText } from '../../src/model/uris';
import { shapes } from '../shapes';
import { checkAccountFields } from './account';
import { withOutputs, type CommonInputs, type Handler } from './handler';
import { ProviderError } from './errors';
import { checkTimeout, isAlive, waitOrUndo } from './jobs';
import { isUnknown } from './plain';
import { removeObject } from '../../src/engine/remove';
import { unlessGone } from './service-answers';

/** The engine's publication recipe's input (src/engine/publication-body.ts), with the image and appliance by URI. */
export interface PublicationInputs extends Omit<PublicationInput, 'imageUri'>, CommonInputs {
  image: string;
  appliance: string;
  timeout: number;
}

const outputsOf = (p: PublishImage, uri: string) => ({ uri: p.uri ?? uri, cloudId: p.cloudId });

export const publication: Handler<PublicationInputs> = {
  inputs: shapes.publication.inputs,
  replaceOn: ['image', 'appliance', 'keystoneDomain', 'keystoneProject', 'displayName', 'publicImage'],
  replaceOnMembers: { account: ['keystoneUrl', 'glanceUrl'] },
  identity: [],

  check(r) {
    const image = r.string('image', { required: true, pattern: uriPattern('machineImage_get'), hint: `must be a MachineImage URI ${uriShapeText('machineImage_get')}` });
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
      timeout: checkTimeout(r),
    };
  },

  async create(client, inputs) {
    const { uid, aid, itid } = uriParams('machineImage_get', inputs.image);
    const p = (inputs.adopt === true ? await findExisting(client, inputs) : undefined) ??
      await client.applianceImage_publish({ uid, aid, itid, body: publishImageBody({ ...inputs, imageUri: inputs.image }) });
    const uri = p.uri;
    if (!uri) throw new ProviderError('service', 'the service returned no uri for the publication');
    await waitOrUndo(client, p, inputs.timeout, `publication of ${inputs.image}`, () => removeObject(client, 'publication', uri));
    const done = await client.getByUri('publishImage', uri);
    return { id: uri, outs: withOutputs('publication', inputs, outputsOf(done, uri)) };
  },

  async read(client, id, props) {
    const p = await unlessGone(client.getByUri('publishImage', id));
    if (!p || !isAlive(p)) return undefined;
    const now = { ...props, displayName: p.displayName ?? props.displayName, keystoneProject: p.keystoneProject ?? props.keystoneProject };
    return withOutputs('publication', now, outputsOf(p, id));
  },

  // Only credentials, `timeout`, `adopt` and connection keys reach here: state only.
  async update(_client, _id, olds, news) {
    return { ...olds, ...news };
  },

  async delete(client, id) {
    await removeObject(client, 'publication', id);
  },
};

/** A publication of that image under that name that did not fail, for `adopt`. */
async function findExisting(client: Client, inputs: PublicationInputs): Promise<PublishImage | undefined> {
  const { uid, aid } = uriParams('machineImage_get', inputs.image);
  const list = await client.machineImagePublished_getAll({ uid, aid });
  return (list.publishImages ?? []).find((p) => p.uri && p.imageUri === inputs.image && p.displayName === inputs.displayName && isAlive(p));
}
