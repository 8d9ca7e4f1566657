// MachineImage: one generation of an appliance in a target format (wire contract §8). Created by
// generating and waiting; every input that shapes the image, and the appliance's revision, replaces it.
import type { Client } from '../../src/client';
import { fiql } from '../../src/fiql/builder';
import type { Image } from '../../src/model/resources';
import { SBOM_FORMATS } from '../../src/model/sbom';
import { uriOf, uriParams, uriPattern, uriShapeText } from '../../src/model/uris';
import { shapes } from '../shapes';
import { withOutputs, type CommonInputs, type Handler } from './handler';
import { ProviderError } from './errors';
import { checkTimeout, isAlive, waitOrUndo } from './jobs';
import { removeObject } from '../../src/engine/remove';
import { created, unlessGone } from './service-answers';
import { isRecord, isUnknown, stringOf } from './plain';
import { unknownFormat } from '../../src/engine/vocabularies';

export interface MachineImageInputs extends CommonInputs {
  /** An appliance URI. */
  appliance: string;
  applianceRevision?: number;
  /** A target format name. */
  format: string;
  compress: boolean;
  memorySize: number;
  diskSize: number;
  timeout: number;
}

const ids = (uri: string) => uriParams('machineImage_get', uri);

/** A URI of the service's documents as a whole URL under its base URL (one already absolute stays). */
const absolute = (client: Client, u: string | undefined): string | undefined =>
  u === undefined || /^https?:\/\//i.test(u) ? u : `${client.baseUrl}/${u.replace(/^\/+/, '')}`;

const outputsOf = (client: Client, img: Image, uri: string) => {
  // The reference server's SBOM route (an extension): URIs only, so the state stays small.
  const sbomUris = Object.fromEntries(SBOM_FORMATS.map((f) => [f.id, uriOf('machineImageSbom_download', { ...ids(img.uri ?? uri), format: f.id })]));
  return {
    uri: img.uri ?? uri,
    sha256: img.sha256sum,
    fileSize: img.fileSize ?? img.size,
    downloadUri: img.downloadUri,
    fileName: img.fileName,
    sbomUris,
    // What a user exports: whole URLs (a relative URI is usable only through the client).
    downloadUrl: absolute(client, img.downloadUri),
    sbomUrls: Object.fromEntries(Object.entries(sbomUris).map(([k, v]) => [k, absolute(client, v)])),
  };
};

/** A generation that did not finish leaves nothing behind: cancel if still running, then delete. */
async function discard(client: Client, uri: string): Promise<void> {
  const { uid, aid, itid } = ids(uri);
  await client.machineImageGeneration_cancel({ uid, aid, itid }).catch(() => undefined);
  await removeObject(client, 'image', uri).catch(() => undefined);
}

/** An image of that appliance and format that is done or still running, for `adopt`. */
async function findExisting(client: Client, uid: string, aid: string, format: string): Promise<Image | undefined> {
  const list = await client.machineImage_getAll({ uid, aid, params: { query: fiql.eq('targetFormat.name', format) } });
  return (list.images ?? [])
    .filter((i) => i.uri && i.targetFormat?.name === format && isAlive(i))
    .sort((a, b) => (b.dbId ?? 0) - (a.dbId ?? 0))[0];
}

export const machineImage: Handler<MachineImageInputs> = {
  inputs: shapes.machineImage.inputs,
  replaceOn: ['appliance', 'applianceRevision', 'format', 'compress', 'memorySize', 'diskSize'],
  identity: [],

  check(r) {
    return {
      appliance: r.string('appliance', { required: true, pattern: uriPattern('appliance_get'), hint: `must be an Appliance URI ${uriShapeText('appliance_get')}` }),
      applianceRevision: r.integer('applianceRevision', { min: 0, max: 2 ** 31 - 1 }),
      format: r.string('format', { required: true, hint: 'is a target format name such as "QCOW2" or "OpenStack QCOW2"' }),
      compress: r.boolean('compress', false),
      memorySize: r.integer('memorySize', { min: 128, max: 1 << 20, default: 1024, unit: 'MiB' }),
      diskSize: r.integer('diskSize', { min: 1024, max: 1 << 24, default: 2048, unit: 'MiB' }),
      timeout: checkTimeout(r),
    };
  },

  /** The format by the service's own list (the engine's message, resolve.ts): a preview fails on a name it does not offer. */
  async preflight(client, inputs, skip) {
    const format = inputs.format;
    if (typeof format !== 'string' || isUnknown(format) || skip('format')) return [];
    const list = await client.userTargetFormat_getAll({});
    const problem = unknownFormat(format, (list.targetFormats ?? []).flatMap((f) => (f.name ? [f.name] : [])));
    return problem ? [{ property: 'format', reason: `format: ${problem}` }] : [];
  },

  async create(client, inputs) {
    const { uid, aid } = uriParams('appliance_get', inputs.appliance);
    const { format, compress, memorySize, diskSize } = inputs;
    const img = (inputs.adopt === true ? await findExisting(client, uid, aid, format) : undefined) ??
      await created(`a ${format} generation of ${inputs.appliance}`, client.machineImage_generate({
        uid, aid,
        body: { targetFormat: { name: format }, compress, installProfile: { memorySize, diskSize } },
      }));
    const uri = img.uri;
    if (!uri) throw new ProviderError('service', 'the service returned no uri for the image');
    await waitOrUndo(client, img, inputs.timeout, `generation of ${uri}`, () => discard(client, uri));
    const done = await client.machineImage_get(ids(uri));
    return { id: uri, outs: withOutputs('machineImage', inputs, outputsOf(client, done, uri)) };
  },

  async read(client, id, props) {
    const img = await unlessGone(client.machineImage_get(ids(id)));
    // A generation that failed or was cancelled is no image: gone, to be made again.
    if (!img || !isAlive(img)) return undefined;
    const now = { ...props, format: img.targetFormat?.name ?? props.format, compress: img.compress ?? props.compress };
    return withOutputs('machineImage', now, outputsOf(client, img, id));
  },

  // Only `timeout`, `adopt` and connection keys reach here (everything else replaces): state only.
  async update(client, _id, olds, news) {
    // State from a release before `downloadUrl` gains it here too.
    const sbomUris = isRecord(olds.sbomUris) ? olds.sbomUris : {};
    return {
      ...olds, ...news,
      downloadUrl: absolute(client, stringOf(olds.downloadUri)),
      sbomUrls: Object.fromEntries(Object.entries(sbomUris).map(([k, v]) => [k, absolute(client, stringOf(v))])),
    };
  },

  async delete(client, id) {
    await removeObject(client, 'image', id);
  },
};
