// What the user holds on the service of the kinds a declaration makes, for `list` and `show`: one
// table says how each kind is read and how one of its records is summed up in a row. Reads only.
import type { Client } from '../client';
import { jobState } from '../model/job-state';
import { redact } from '../model/redact';
import type { Appliance, DocumentOf, Image, MySoftware, PublishImage } from '../model/resources';
import { uriOf, uriParams, uriShapeText } from '../model/uris';
import { recordUri } from './plan';
import type { RemovableKind } from './remove';

/** One record in a list: the same few columns for every kind, the kind's own fields beside them. */
export interface InventoryItem {
  readonly kind: RemovableKind;
  readonly uri: string;
  readonly name: string;
  /** `revision N` for an appliance; the job's state for an image or a publication. */
  readonly state: string;
  readonly detail: string;
  readonly fields: Readonly<Record<string, string | number>>;
}

const mib = (n: number | undefined): string => (n === undefined ? '' : `${(n / 1048576).toFixed(1)} MiB`);
const known = (o: Record<string, string | number | undefined>): Record<string, string | number> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string | number] => e[1] !== undefined));

const KINDS = {
  appliance: {
    root: 'appliance', shape: 'appliance_get',
    row: (a: Appliance) => ({
      name: `${a.name ?? '?'} ${a.version ?? '?'}`, state: `revision ${a.revision ?? 0}`, detail: a.description ?? '',
      fields: known({ revision: a.revision }),
    }),
  },
  software: {
    root: 'mySoftware', shape: 'mySoftware_get',
    row: (s: MySoftware) => ({ name: `${s.name ?? '?'} ${s.version ?? '?'}`, state: '', detail: s.description ?? '', fields: {} }),
  },
  image: {
    root: 'image', shape: 'machineImage_get',
    row: (i: Image) => ({
      name: i.targetFormat?.name ?? '?', state: jobState(i.status ?? {}),
      detail: [`${i.name ?? '?'} ${i.version ?? '?'} revision ${i.revision ?? 0}`, mib(i.fileSize ?? i.size)].filter(Boolean).join(', '),
      fields: known({ format: i.targetFormat?.name, revision: i.revision, sha256: i.sha256sum, applianceUri: i.parentUri }),
    }),
  },
  publication: {
    root: 'publishImage', shape: 'machineImagePublished_get',
    row: (p: PublishImage) => ({
      name: p.displayName ?? '?', state: jobState(p.status ?? {}), detail: p.cloudId ? `cloud id ${p.cloudId}` : '',
      fields: known({ cloudId: p.cloudId, imageUri: p.imageUri }),
    }),
  },
} as const;

/** The kinds in the order `list` shows them. */
export const INVENTORY_KINDS = Object.keys(KINDS) as RemovableKind[];

function item<K extends RemovableKind>(kind: K, rec: Parameters<(typeof KINDS)[K]['row']>[0]): InventoryItem {
  const row = (KINDS[kind].row as (r: typeof rec) => Omit<InventoryItem, 'kind' | 'uri'>)(rec);
  return { kind, uri: recordUri(rec, KINDS[kind].root), ...row };
}

/** Every appliance, software component, image and publication of the user (of `kinds`, when given). */
export async function listInventory(client: Client, kinds: readonly RemovableKind[] = INVENTORY_KINDS, signal?: AbortSignal): Promise<InventoryItem[]> {
  const want = new Set(kinds);
  const [apps, sw] = await Promise.all([
    client.appliance_getAll({ signal }),
    want.has('software') ? client.mySoftware_getAll({ signal }) : undefined,
  ]);
  const appliances = apps.appliances ?? [];
  // Images and publications live under their appliance.
  const perApp = await Promise.all(appliances.map(async (a) => {
    const aid = uriParams('appliance_get', recordUri(a, 'appliance')).aid;
    const [images, pubs] = await Promise.all([
      want.has('image') ? client.machineImage_getAll({ aid, signal }) : undefined,
      want.has('publication') ? client.machineImagePublished_getAll({ aid, signal }) : undefined,
    ]);
    return { images: images?.images ?? [], pubs: pubs?.publishImages ?? [] };
  }));
  return [
    ...(want.has('appliance') ? appliances.map((a) => item('appliance', a)) : []),
    ...(sw?.mySoftwareList ?? []).map((s) => item('software', s)),
    ...perApp.flatMap((x) => x.images.map((i) => item('image', i))),
    ...perApp.flatMap((x) => x.pubs.map((p) => item('publication', p))),
  ];
}

/** The URI `show` reads: the URI itself, or for an appliance or a component its number among the user's. */
export function inventoryUri(kind: RemovableKind, id: string, login: string): string {
  if (/^\d+$/.test(id) && kind === 'appliance') return uriOf('appliance_get', { uid: login, aid: id });
  if (/^\d+$/.test(id) && kind === 'software') return uriOf('mySoftware_get', { uid: login, msid: id });
  // A TypeError naming the shape when it is not a URI of the kind.
  uriParams(KINDS[kind].shape, id);
  return id;
}

/** The shape of a URI of `kind`, for messages. */
export const inventoryUriText = (kind: RemovableKind): string => uriShapeText(KINDS[kind].shape);

/** One record of `kind`, read by its URI, without its secret fields. */
export async function showRecord(client: Client, kind: RemovableKind, uri: string, signal?: AbortSignal): Promise<DocumentOf<(typeof KINDS)[RemovableKind]['root']>> {
  const root = KINDS[kind].root;
  return redact(root, await client.getByUri(root, uri, { signal }));
}
