// MachineImage: one generation of an appliance in a target format (wire contract §8). Created by
// generating and waiting; every input that shapes the image, and the appliance's revision, replaces it.
import type { Client } from '../../src/client';
import { isForgeError, messageOf } from '../../src/errors';
import { fiql } from '../../src/fiql/builder';
import type { Image } from '../../src/model/resources';
import { deleteIfThere, existsMessage, isConflict, unlessGone, type Handler } from './handler';
import { uriParams, uriPattern, uriShapeText } from '../../src/model/uris';
import type { Props } from './values';

const APPLIANCE_URI = uriPattern('appliance_get');
/** Seconds; the default wait for a generation. */
export const DEFAULT_TIMEOUT_S = 3600;

const ids = (uri: string) => uriParams('machineImage_get', uri);

function outputs(inputs: Props, img: Image): Props {
  return {
    ...inputs,
    uri: img.uri,
    sha256: img.sha256sum,
    fileSize: img.fileSize ?? img.size,
    downloadUri: img.downloadUri,
    fileName: img.fileName,
  };
}

/** A generation that did not finish leaves nothing behind: cancel if still running, then delete. */
async function discard(client: Client, uri: string): Promise<void> {
  const { uid, aid, itid } = ids(uri);
  await client.machineImageGeneration_cancel({ uid, aid, itid }).catch(() => undefined);
  await client.machineImage_delete({ uid, aid, itid }).catch(() => undefined);
}

async function waitAndGet(client: Client, img: Image, timeoutS: number): Promise<Image> {
  try {
    await client.waitForJob(img, { timeoutMs: timeoutS * 1000, pollMs: 500, maxPollMs: 5000 });
  } catch (e) {
    await discard(client, img.uri!);
    const why = isForgeError(e, 'E_WAIT_TIMEOUT') ? `did not finish within ${timeoutS} s (raise \`timeout\`)` : messageOf(e);
    throw new Error(`generation of ${img.uri} failed: ${why}`);
  }
  const { uid, aid, itid } = ids(img.uri!);
  return client.machineImage_get({ uid, aid, itid });
}

/** An image of that appliance and format that is done or still running, for `adopt`. */
async function findExisting(client: Client, uid: string, aid: string, format: string): Promise<Image | undefined> {
  const list = await client.machineImage_getAll({ uid, aid, params: { query: fiql.eq('targetFormat.name', format) } });
  return (list.images ?? [])
    .filter((i) => i.uri && i.targetFormat?.name === format && i.status?.error !== true && i.status?.cancelled !== true)
    .sort((a, b) => (b.dbId ?? 0) - (a.dbId ?? 0))[0];
}

export const machineImage: Handler = {
  inputs: ['appliance', 'applianceRevision', 'format', 'compress', 'memorySize', 'diskSize', 'timeout', 'connection', 'adopt'],
  replaceOn: ['appliance', 'applianceRevision', 'format', 'compress', 'memorySize', 'diskSize'],
  identity: [],

  check(r) {
    return {
      appliance: r.string('appliance', { required: true, pattern: APPLIANCE_URI, hint: `must be an Appliance URI ${uriShapeText('appliance_get')}` }),
      applianceRevision: r.integer('applianceRevision', { min: 0, max: 2 ** 31 - 1 }),
      format: r.string('format', { required: true, hint: 'is a target format name such as "QCOW2" or "OpenStack QCOW2"' }),
      compress: r.boolean('compress', false),
      memorySize: r.integer('memorySize', { min: 128, max: 1 << 20, default: 1024, unit: 'MiB' }),
      diskSize: r.integer('diskSize', { min: 1024, max: 1 << 24, default: 2048, unit: 'MiB' }),
      timeout: r.integer('timeout', { min: 1, max: 7 * 24 * 3600, default: DEFAULT_TIMEOUT_S, unit: 'seconds' }),
    };
  },

  async create(client, inputs) {
    const { uid, aid } = uriParams('appliance_get', inputs.appliance as string);
    const format = inputs.format as string;
    let img = inputs.adopt === true ? await findExisting(client, uid, aid, format) : undefined;
    if (!img) {
      try {
        img = await client.machineImage_generate({
          uid, aid,
          body: {
            targetFormat: { name: format },
            compress: inputs.compress as boolean,
            installProfile: { memorySize: inputs.memorySize as number, diskSize: inputs.diskSize as number },
          },
        });
      } catch (e) {
        if (isConflict(e)) throw new Error(existsMessage(`a ${format} generation of ${inputs.appliance as string}`));
        throw e;
      }
    }
    if (!img.uri) throw new Error('the service returned no uri for the image');
    const done = await waitAndGet(client, img, inputs.timeout as number);
    return { id: img.uri, outs: outputs(inputs, done) };
  },

  async read(client, id, props) {
    const { uid, aid, itid } = ids(id);
    const img = await unlessGone(client.machineImage_get({ uid, aid, itid }));
    // A generation that failed or was cancelled is no image: gone, to be made again.
    if (!img || img.status?.error === true || img.status?.cancelled === true) return undefined;
    return {
      ...outputs(props, img),
      format: img.targetFormat?.name ?? props.format,
      compress: img.compress ?? props.compress,
    };
  },

  // Only `timeout`, `adopt` and connection keys reach here (everything else replaces): state only.
  async update(_client, _id, olds, news) {
    return { ...olds, ...news };
  },

  async delete(client, id) {
    const { uid, aid, itid } = ids(id);
    await deleteIfThere(client.machineImage_delete({ uid, aid, itid }));
  },
};
