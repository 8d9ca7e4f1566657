// Appliance: a template with its distribution, one OS profile (spec rule 2), packages added to that profile
// (rule 3) and software components (rule 4 d). Name, version, distribution, profile and organization fix
// the template (replace); description, packages and software change in place.
import type { Client } from '../../src/client';
import { fiql } from '../../src/fiql/builder';
import { findPackage, wantedLabel } from '../../src/engine/package-choice';
import { GROUP_KEYS, INSTALL_KEYS, installProfileOf, KEY_KEYS, ROOT_KEYS, USER_KEYS, type InstallationInput } from '../../src/engine/installation';
import type { Appliance, InstallProfile, MySoftware } from '../../src/model/resources';
import { checkNamed, deleteIfThere, existsMessage, isConflict, lastId, unlessGone, type Handler } from './handler';
import { uriParams, uriPattern, uriShapeText } from '../../src/model/uris';
import { isRecord, isUnknown, type Inputs, type Props } from './values';

export interface PackageSpec { name: string; version?: string; arch?: string }
export interface DistributionSpec { name: string; version: string; arch?: string }

const DISTRIBUTION_URI = uriPattern('os_get');
const SOFTWARE_URI = uriPattern('mySoftware_get');

function checkDistribution(r: Inputs): DistributionSpec | string | undefined {
  const raw = r.raw('distribution');
  if (typeof raw === 'string') return r.string('distribution', { pattern: DISTRIBUTION_URI, hint: `must be a URI ${uriShapeText('os_get')} or {name, version, arch}` });
  return r.object('distribution', (d) => ({
    name: d.string('name', { required: true }) ?? '',
    version: d.string('version', { required: true }) ?? '',
    arch: d.string('arch'),
  }), { required: true });
}

function checkPackage(p: Inputs, raw: unknown): PackageSpec | undefined {
  if (typeof raw === 'string') return raw === '' ? void p.fail('name', 'a package name must not be empty') : { name: raw };
  if (!isRecord(raw)) return void p.fail('name', 'each package must be a name or {name, version?, arch?}');
  const name = p.string('name', { required: true });
  return name === undefined ? undefined : { name, version: p.string('version'), arch: p.string('arch') };
}

/**
 * `installation`, the declaration's section: every key the image build does not set is a failure (never
 * dropped); values (ranges, timezone names, keys) are the service's to judge, and its 400 names the field.
 */
function checkInstallation(r: Inputs): InstallationInput | undefined {
  const raw = r.raw('installation');
  if (raw === undefined || isUnknown(raw)) return raw as undefined;
  if (!isRecord(raw)) return void r.fail('installation', 'installation must be an object');
  const keys = (v: unknown, known: readonly string[], at: string): void => {
    if (!isRecord(v)) return void (v !== undefined && r.fail(at, `${at} must be an object`));
    for (const k of Object.keys(v)) if (!known.includes(k)) r.fail(`${at}.${k}`, `${at}.${k} is not set by the image build`);
  };
  const each = (v: unknown, known: readonly string[], at: string) => (Array.isArray(v) ? v.forEach((x, i) => keys(x, known, `${at}[${i}]`)) : undefined);
  keys(raw, INSTALL_KEYS, 'installation');
  keys(raw.rootUser, ROOT_KEYS, 'installation.rootUser');
  if (isRecord(raw.rootUser)) each(raw.rootUser.sshKeys, KEY_KEYS, 'installation.rootUser.sshKeys');
  each(raw.users, USER_KEYS, 'installation.users');
  if (Array.isArray(raw.users)) raw.users.forEach((u, i) => isRecord(u) && each(u.sshKeys, KEY_KEYS, `installation.users[${i}].sshKeys`));
  each(raw.groups, GROUP_KEYS, 'installation.groups');
  return raw;
}

/** The install profile to write (plain passwords: the service hashes them), or undefined for none declared. */
const profileOf = (props: Props): InstallProfile | undefined =>
  isRecord(props.installation) ? installProfileOf(props.installation, true) : undefined;

const packagesOf = (props: Props): PackageSpec[] =>
  Array.isArray(props.packages) ? props.packages.filter(isRecord).map((p) => p as unknown as PackageSpec) : [];
const stringsOf = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

async function resolveDistribution(client: Client, d: unknown): Promise<string> {
  if (typeof d === 'string') return d;
  const spec = d as DistributionSpec;
  const list = await client.os_getAll({
    params: { query: fiql.and(fiql.eq('name', spec.name), fiql.eq('version', spec.version), spec.arch ? fiql.eq('arch', spec.arch) : undefined) },
  });
  const found = (list.distributions ?? []).filter((x) => x.uri);
  const label = `${spec.name} ${spec.version}${spec.arch ? ` ${spec.arch}` : ''}`;
  if (found.length === 0) throw new Error(`distribution ${label} is not offered by the service`);
  if (found.length > 1) throw new Error(`distribution ${label} is ambiguous (${found.map((x) => x.arch).join(', ')}): give its arch`);
  return found[0]!.uri!;
}

/** Package URIs for the specs, in their order, by the engine's recipe (src/engine/package-choice.ts). */
export async function resolvePackages(client: Client, distUri: string, specs: PackageSpec[]): Promise<string[]> {
  const { id } = uriParams('os_get', distUri);
  const out: string[] = [];
  for (const p of specs) {
    const hit = await findPackage(client, id, p);
    if (!hit?.uri) throw new Error(`package ${wantedLabel(p)} is not in ${distUri}`);
    out.push(hit.uri);
  }
  return out;
}

/** The template's OS profile: the one it has, or one made from the named base profile. */
async function ensureProfile(client: Client, app: Appliance, distUri: string, profileName: string): Promise<string> {
  if (app.osProfileUri) return app.osProfileUri;
  const { uid, aid } = uriParams('appliance_get', app.uri!);
  const bases = await client.osTemplate_getAll({ id: lastId(distUri) });
  const base = (bases.distribProfiles ?? []).find((b) => b.name === profileName);
  if (!base?.uri) {
    const names = (bases.distribProfiles ?? []).map((b) => b.name).join(', ');
    throw new Error(`base profile "${profileName}" is not offered for ${distUri} (offered: ${names || 'none'})`);
  }
  const made = await client.applianceOSProfile_create({ uid, aid, body: { kind: 'LinuxProfile', name: base.name, standardProfileUri: base.uri } });
  if (!made.uri) throw new Error('the service returned no uri for the OS profile');
  return made.uri;
}

async function softwareList(client: Client, uris: string[]): Promise<MySoftware[]> {
  const out: MySoftware[] = [];
  for (const uri of uris) {
    const sw = await client.getByUri('mySoftware', uri);
    out.push({ name: sw.name, version: sw.version, uri: sw.uri ?? uri });
  }
  return out;
}

/** Every package URI the template's OS profile installs now. */
async function profilePackageUris(client: Client, osProfileUri: string): Promise<string[]> {
  const { uid, aid, osid } = uriParams('applianceOSProfile_get', osProfileUri);
  const list = await client.applianceOSProfilePkg_getAll({ uid, aid, osid });
  return stringsOf((list.pkgs ?? []).map((p) => p.uri));
}

async function changePackages(client: Client, osProfileUri: string, added: string[], deleted: string[]): Promise<void> {
  if (added.length === 0 && deleted.length === 0) return;
  const { uid, aid, osid } = uriParams('applianceOSProfile_get', osProfileUri);
  await client.applianceOSProfilePkg_updateAll({
    uid, aid, osid,
    body: { ...(added.length ? { addedPkgUris: added } : {}), ...(deleted.length ? { deletedPkgUris: deleted } : {}) },
  });
}

function outputs(inputs: Props, app: Appliance, distributionUri: string, osProfileUri: string, packageUris: string[]): Props {
  return { ...inputs, uri: app.uri, revision: app.revision ?? 0, distributionUri, osProfileUri, packageUris };
}

const ids = (uri: string) => uriParams('appliance_get', uri);

export const appliance: Handler = {
  inputs: ['name', 'version', 'description', 'distribution', 'osProfile', 'packages', 'software', 'installation', 'org', 'connection', 'adopt'],
  replaceOn: ['name', 'version', 'distribution', 'osProfile', 'org'],
  identity: ['name', 'version'],

  check(r) {
    return {
      ...checkNamed(r),
      distribution: checkDistribution(r),
      // The platform tool's examples rely on every Linux distribution offering `Minimal` (wire contract §10).
      osProfile: r.string('osProfile', { default: 'Minimal' }),
      packages: r.list('packages', checkPackage) ?? [],
      software: r.list('software', (s, raw) =>
        isUnknown(raw) ? (raw as string)
          : typeof raw === 'string' && SOFTWARE_URI.test(raw) ? raw
            : void s.fail('uri', `software items must be Software URIs ${uriShapeText('mySoftware_get')}, not ${JSON.stringify(raw)}`),
      ) ?? [],
      org: r.string('org', { pattern: uriPattern('org_get'), hint: `must be a URI ${uriShapeText('org_get')}` }),
      installation: checkInstallation(r),
    };
  },

  async create(client, inputs) {
    const name = inputs.name as string;
    const version = inputs.version as string;
    const distributionUri = await resolveDistribution(client, inputs.distribution);
    let app: Appliance | undefined;
    if (inputs.adopt === true) {
      const list = await client.appliance_getAll({ params: { query: fiql.and(fiql.eq('name', name), fiql.eq('version', version)) } });
      app = (list.appliances ?? []).find((a) => a.name === name && a.version === version);
      if (app?.distributionUri && app.distributionUri !== distributionUri) {
        throw new Error(`cannot adopt appliance ${name} ${version}: it is built on ${app.distributionUri}, not ${distributionUri}`);
      }
    }
    if (!app) {
      try {
        app = await client.appliance_create({
          body: {
            name, version, distributionUri,
            ...(inputs.description ? { description: inputs.description as string } : {}),
            ...(inputs.org ? { orgUri: inputs.org as string } : {}),
          },
        });
      } catch (e) {
        if (isConflict(e)) throw new Error(existsMessage(`appliance ${name} ${version}`));
        throw e;
      }
    }
    if (!app.uri) throw new Error(`the service returned no uri for appliance ${name} ${version}`);
    const osProfileUri = await ensureProfile(client, app, distributionUri, inputs.osProfile as string);
    const packageUris = await resolvePackages(client, distributionUri, packagesOf(inputs));
    const { uid, aid } = ids(app.uri);
    const current = new Set(app.osProfileUri ? await profilePackageUris(client, osProfileUri) : []);
    await changePackages(client, osProfileUri, packageUris.filter((u) => !current.has(u)), []);
    const sw = stringsOf(inputs.software);
    const fresh = await client.appliance_get({ uid, aid });
    const wantDescription = (inputs.description as string | undefined) ?? fresh.description;
    const installProfile = profileOf(inputs);
    if (sw.length > 0 || wantDescription !== fresh.description || installProfile) {
      await client.appliance_update({
        uid, aid,
        body: { ...fresh, description: wantDescription, mySoftwareList: await softwareList(client, sw), ...(installProfile ? { installProfile } : {}) },
      });
    }
    const final = await client.appliance_get({ uid, aid });
    return { id: app.uri, outs: outputs(inputs, final, distributionUri, osProfileUri, packageUris) };
  },

  async read(client, id, props) {
    const { uid, aid } = ids(id);
    const app = await unlessGone(client.appliance_get({ uid, aid }));
    if (!app) return undefined;
    // Packages removed on the service drop out of `packages`, so the next diff adds them back.
    const osProfileUri = app.osProfileUri ?? (props.osProfileUri as string | undefined);
    const present = new Set(osProfileUri ? await profilePackageUris(client, osProfileUri) : []);
    const oldUris = stringsOf(props.packageUris);
    const packages: PackageSpec[] = [];
    const packageUris: string[] = [];
    packagesOf(props).forEach((p, i) => {
      if (oldUris[i] && present.has(oldUris[i])) { packages.push(p); packageUris.push(oldUris[i]); }
    });
    return {
      ...props,
      name: app.name, version: app.version, description: app.description,
      software: (app.mySoftwareList ?? []).map((s) => s.uri).filter((u): u is string => !!u),
      packages, packageUris,
      uri: app.uri ?? id, revision: app.revision ?? 0,
      distributionUri: app.distributionUri ?? props.distributionUri,
      osProfileUri,
    };
  },

  async update(client, id, olds, news) {
    const { uid, aid } = ids(id);
    const app = await client.appliance_get({ uid, aid });
    const distributionUri = app.distributionUri ?? (olds.distributionUri as string) ?? (await resolveDistribution(client, news.distribution));
    const osProfileUri = app.osProfileUri ?? (await ensureProfile(client, { ...app, uri: id }, distributionUri, news.osProfile as string));
    const packageUris = await resolvePackages(client, distributionUri, packagesOf(news));
    const oldUris = stringsOf(olds.packageUris);
    await changePackages(client, osProfileUri, packageUris.filter((u) => !oldUris.includes(u)), oldUris.filter((u) => !packageUris.includes(u)));
    const sw = stringsOf(news.software);
    const haveSw = (app.mySoftwareList ?? []).map((s) => s.uri);
    // The service never shows a password, so a changed installation is told by the inputs, not by the service.
    const installChanged = JSON.stringify(olds.installation ?? null) !== JSON.stringify(news.installation ?? null);
    const installProfile = profileOf(news);
    if (JSON.stringify(haveSw) !== JSON.stringify(sw) || (news.description ?? undefined) !== (app.description ?? undefined) || installChanged) {
      await client.appliance_update({
        uid, aid,
        body: {
          ...app, description: news.description as string | undefined, mySoftwareList: await softwareList(client, sw),
          ...(installChanged ? { installProfile: installProfile ?? {} } : {}),
        },
      });
    }
    const final = await client.appliance_get({ uid, aid });
    return outputs(news, final, distributionUri, osProfileUri, packageUris);
  },

  async delete(client, id) {
    const { uid, aid } = ids(id);
    await deleteIfThere(client.appliance_delete({ uid, aid }));
  },
};
