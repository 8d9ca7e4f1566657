// Software: a component of the user's software library with its uploaded files, made by the spec's
// four-stage flow (rule 4, stages a–c; stage d is the Appliance's `software` input). A file's content hash,
// taken in `check`, drives updates: a changed file is uploaded again, an unchanged one is left alone.
import { basename, resolve } from 'node:path';
import type { Client } from '../../src/client';
import { sha256FileSync } from '../../src/digest';
import { RULES } from '../../src/model/field-rules';
import { fiql } from '../../src/fiql/builder';
import type { MySoftware } from '../../src/model/resources';
import { uriParams } from '../../src/model/uris';
import { shapes } from '../shapes';
import { withOutputs, type CommonInputs, type Handler } from './handler';
import { ProviderError } from './errors';
import { checkNamed, type Inputs, type Named } from './inputs';
import { isRecord, isUnknown, stringsOf, UNKNOWN } from './plain';
import { removeObject } from '../../src/engine/remove';
import { created, deleteIfThere, unlessGone } from './service-answers';

export interface SoftwareFileState {
  source: string;
  destination?: string | undefined;
  rights?: string | undefined;
  ownerGroup?: string | undefined;
  /** sha256 of the content, hex; UNKNOWN while the path is unknown. */
  sha256: string;
}


function checkFile(f: Inputs, raw: unknown): SoftwareFileState | undefined {
  if (isUnknown(raw)) return { source: UNKNOWN, sha256: UNKNOWN };
  if (!isRecord(raw)) return void f.fail('source', 'each file must be an object {source, destination?, rights?, ownerGroup?}');
  const source = f.string('source', { required: true });
  const rest = {
    // The service's rules for a file's place, mode and owner (installLocation, rights, ownerGroup).
    destination: f.string('destination', { rule: RULES.installLocation }),
    rights: f.string('rights', { rule: RULES.rights }),
    ownerGroup: f.string('ownerGroup', { rule: RULES.ownerGroup }),
  };
  if (source === undefined) return undefined;
  if (isUnknown(source)) return { source, ...rest, sha256: UNKNOWN };
  try {
    // Relative paths are relative to the project folder, the host's working directory.
    return { source, ...rest, sha256: sha256FileSync(resolve(source)) };
  } catch (e) {
    f.fail('source', `cannot read ${source}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
    return undefined;
  }
}

const fileKey = (f: SoftwareFileState): string => JSON.stringify([f.source, f.destination, f.rights, f.ownerGroup, f.sha256]);

async function uploadFile(client: Client, uid: string, msid: string, f: SoftwareFileState): Promise<string> {
  const name = basename(f.source);
  const artifact = await client.mySoftwareArtifact_add({
    uid,
    msid,
    body: {
      kind: 'SoftwareFile',
      name,
      fullName: name,
      origName: name,
      installLocation: f.destination,
      rights: f.rights,
      ownerGroup: f.ownerGroup,
    },
  });
  if (!artifact.uri) throw new ProviderError('service', `the service returned no uri for the artifact ${name}`);
  await client.upload({ uid, msid, said: uriParams('mySoftwareArtifact_get', artifact.uri).said, fileName: name }, { file: resolve(f.source) });
  return artifact.uri;
}

async function findByNameVersion(client: Client, name: string, version: string): Promise<MySoftware | undefined> {
  const list = await client.mySoftware_getAll({ params: { query: fiql.and(fiql.eq('name', name), fiql.eq('version', version)) } });
  return (list.mySoftwareList ?? []).find((s) => s.name === name && s.version === version);
}

/** Makes the artifacts of a component match `files`, reusing those whose key is unchanged. */
async function syncFiles(client: Client, uri: string, oldFiles: SoftwareFileState[], oldUris: string[], files: SoftwareFileState[]): Promise<string[]> {
  const { uid, msid } = uriParams('mySoftware_get', uri);
  const kept = new Map<string, string[]>();
  oldFiles.forEach((f, i) => {
    const u = oldUris[i];
    if (u) kept.set(fileKey(f), [...(kept.get(fileKey(f)) ?? []), u]);
  });
  const out: string[] = [];
  for (const f of files) {
    const reuse = kept.get(fileKey(f))?.shift();
    out.push(reuse ?? (await uploadFile(client, uid, msid, f)));
  }
  // Every artifact not reused goes, also those we never knew the file of (an adopted component's).
  for (const stale of oldUris.filter((u) => !out.includes(u))) {
    await deleteIfThere(client.mySoftwareArtifact_delete({ uid, msid, said: uriParams('mySoftwareArtifact_get', stale).said }));
  }
  return out;
}

export interface SoftwareInputs extends Named, CommonInputs { files: SoftwareFileState[] }

export const software: Handler<SoftwareInputs> = {
  inputs: shapes.software.inputs,
  replaceOn: ['name', 'version'],
  identity: ['name', 'version'],

  check(r) {
    return {
      ...checkNamed(r),
      files: r.list('files', checkFile) ?? [],
    };
  },

  async create(client, inputs) {
    const { name, version, description } = inputs;
    let sw: MySoftware;
    let haveUris: string[] = [];
    const found = inputs.adopt === true ? await findByNameVersion(client, name, version) : undefined;
    if (found?.uri) {
      sw = found;
      // Adopted: its existing artifacts are unknown to us, so they are replaced by `files`.
      const { uid, msid } = uriParams('mySoftware_get', found.uri);
      const arts = await client.mySoftwareArtifact_getAll({ uid, msid });
      haveUris = stringsOf((arts.softwareArtifacts ?? []).map((a) => a.uri));
      if ((description ?? undefined) !== (found.description ?? undefined)) {
        sw = await client.mySoftware_update({ uid, msid, body: { ...found, description } });
      }
    } else {
      sw = await created(`software ${name} ${version}`, client.mySoftware_create({ body: { name, version, description } }));
    }
    if (!sw.uri) throw new ProviderError('service', `the service returned no uri for software ${name} ${version}`);
    const artifactUris = await syncFiles(client, sw.uri, [], haveUris, inputs.files);
    return { id: sw.uri, outs: withOutputs('software', inputs, { uri: sw.uri, artifactUris }) };
  },

  async read(client, id, props) {
    const { uid, msid } = uriParams('mySoftware_get', id);
    const sw = await unlessGone(client.mySoftware_get({ uid, msid }));
    if (!sw) return undefined;
    const arts = await client.mySoftwareArtifact_getAll({ uid, msid });
    const byUri = new Map((arts.softwareArtifacts ?? []).map((a) => [a.uri, a]));
    // A file whose artifact is gone, or whose content changed on the service, shows as drift.
    const files: SoftwareFileState[] = [];
    const artifactUris: string[] = [];
    const oldUris = stringsOf(props.artifactUris);
    props.files.forEach((f, i) => {
      const u = oldUris[i];
      const a = byUri.get(u);
      if (!a || !u) return;
      files.push(a.sha256sum && a.sha256sum !== f.sha256 ? { ...f, sha256: a.sha256sum } : f);
      artifactUris.push(u);
    });
    return withOutputs('software', { ...props, name: sw.name, version: sw.version, description: sw.description, files }, { uri: sw.uri ?? id, artifactUris });
  },

  async update(client, id, olds, news) {
    const { uid, msid } = uriParams('mySoftware_get', id);
    let sw = await client.mySoftware_get({ uid, msid });
    if ((news.description ?? undefined) !== (sw.description ?? undefined)) {
      sw = await client.mySoftware_update({ uid, msid, body: { ...sw, description: news.description } });
    }
    const artifactUris = await syncFiles(client, id, olds.files, stringsOf(olds.artifactUris), news.files);
    return withOutputs('software', news, { uri: sw.uri ?? id, artifactUris });
  },

  async delete(client, id) {
    await removeObject(client, 'software', id);
  },
};
