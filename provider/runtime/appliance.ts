// Appliance: a template with its distribution, one OS profile (spec rule 2), packages added to that profile
// (rule 3) and software components (rule 4 d). Name, version, distribution, profile and organization fix
// the template (replace); description, packages and software change in place.
import type { Client } from '../../src/client';
import { fiql } from '../../src/fiql/builder';
import { findPackage, wantedLabel, type PackageWanted } from '../../src/engine/package-choice';
import { GROUP_KEYS, INSTALL_KEYS, installProfileOf, KEY_KEYS, ROOT_KEYS, USER_KEYS, type InstallationInput } from '../../src/engine/installation';
import type { Appliance, InstallProfile, MySoftware } from '../../src/model/resources';
import { uriParams, uriPattern, uriShapeText } from '../../src/model/uris';
import { shapes } from '../shapes';
import { withOutputs, type CommonInputs, type Handler } from './handler';
import { ProviderError, inputError } from './errors';
import { checkNamed, type CheckFailure, type Inputs, type Named } from './inputs';
import { installationFailures } from './installation';
import { containsUnknown, isRecord, isUnknown, type Props, stringOf, stringsOf } from './plain';
import { notIn, VOCABULARIES } from '../../src/engine/vocabularies';
import { changeProfilePackages, settleOsProfile, type SettledProfile } from '../../src/engine/os-profile';
import { planOsProfile } from '../../src/engine/plan';
import { removeObject } from '../../src/engine/remove';
import { created, unlessGone } from './service-answers';

export type PackageSpec = PackageWanted;
export interface DistributionSpec { name: string; version: string; arch?: string | undefined }

export interface ApplianceInputs extends Named, CommonInputs {
  /** A URI `distributions/<id>`, or name, version and arch. */
  distribution: string | DistributionSpec;
  osProfile: string;
  packages: PackageSpec[];
  /** Software URIs. */
  software: string[];
  installation?: InstallationInput;
  /** An organization URI. */
  org?: string;
}

const DISTRIBUTION_URI = uriPattern('os_get');
const SOFTWARE_URI = uriPattern('mySoftware_get');

function checkDistribution(r: Inputs): DistributionSpec | string | undefined {
  const raw = r.raw('distribution');
  if (typeof raw === 'string') return r.string('distribution', { pattern: DISTRIBUTION_URI, hint: `must be a URI ${uriShapeText('os_get')} or {name, version, arch}` });
  return r.object('distribution', (d) => {
    const spec = { name: d.string('name', { required: true }) ?? '', version: d.string('version', { required: true }) ?? '', arch: d.string('arch') };
    // The model's closed lists, as `validate` checks a declaration's `os` (vocabularies.ts).
    const closed = (key: 'name' | 'arch', v: string | undefined, list: typeof VOCABULARIES.osName | typeof VOCABULARIES.arch) => {
      const problem = v === undefined || v === '' || isUnknown(v) ? undefined : notIn(`distribution.${key}`, v, list);
      if (problem) d.fail(key, problem);
    };
    closed('name', spec.name, VOCABULARIES.osName);
    closed('arch', spec.arch, VOCABULARIES.arch);
    return spec;
  }, { required: true });
}

function checkPackage(p: Inputs, raw: unknown): PackageSpec | undefined {
  if (typeof raw === 'string') return raw === '' ? void p.fail('name', 'a package name must not be empty') : { name: raw };
  if (!isRecord(raw)) return void p.fail('name', 'each package must be a name or {name, version?, arch?}');
  const name = p.string('name', { required: true });
  return name === undefined ? undefined : { name, version: p.string('version'), arch: p.string('arch') };
}

/**
 * `installation`, the declaration's section: every key the image build does not set is a failure (never
 * dropped); values (ranges, timezone names, keys) break the service's own rules here (installation.ts).
 */
function checkInstallation(r: Inputs): InstallationInput | string | undefined {
  const raw = r.raw('installation');
  if (raw === undefined || isUnknown(raw)) return raw;
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
  r.failures.push(...installationFailures(raw));
  return raw;
}

/** The install profile to write (plain passwords: the service hashes them), or undefined for none declared. */
const profileOf = (inputs: ApplianceInputs): InstallProfile | undefined =>
  inputs.installation ? installProfileOf(inputs.installation, true) : undefined;

/** What only the service knows of an appliance's inputs, looked up before anything is written. */
interface Resolution {
  readonly distributionUri: string;
  /** `Debian 13 x86_64`: how messages name the distribution. */
  readonly label: string;
  readonly base: { readonly name: string; readonly uri: string };
  readonly packageUris: string[];
}

const distLabel = (d: { name?: string | undefined; version?: string | undefined; arch?: string | undefined }) => [d.name, d.version, d.arch].filter(Boolean).join(' ');

/**
 * The distribution, base profile and packages as the service offers them, or one failure per property it does
 * not know (the `check` of a preview, and every create and update before its first write). `skip`: properties
 * already failed or not known yet.
 */
async function resolveOnService(
  client: Client, i: Props, skip: (property: string) => boolean = () => false,
): Promise<{ resolution?: Resolution; failures: CheckFailure[] }> {
  const failures: CheckFailure[] = [];
  const fail = (property: string, reason: string) => ({ failures: [...failures, { property, reason }] });
  const spec = i.distribution;
  if (spec === undefined || containsUnknown(spec) || skip('distribution')) return { failures };
  let distributionUri: string;
  let label: string;
  if (typeof spec === 'string') {
    const d = await unlessGone(client.os_get(uriParams('os_get', spec)));
    if (!d) return fail('distribution', `distribution ${spec} is not offered by the service`);
    distributionUri = d.uri ?? spec;
    label = distLabel(d) || spec;
  } else if (isRecord(spec)) {
    const want = { name: stringOf(spec.name) ?? '', version: stringOf(spec.version) ?? '', arch: stringOf(spec.arch) };
    label = distLabel(want);
    const list = await client.os_getAll({
      params: { query: fiql.and(fiql.eq('name', want.name), fiql.eq('version', want.version), want.arch ? fiql.eq('arch', want.arch) : undefined) },
    });
    const found = (list.distributions ?? []).filter((x) => x.uri);
    if (found.length === 0) {
      const same = await client.os_getAll({ params: { query: fiql.eq('name', want.name) } });
      const offered = [...new Set((same.distributions ?? []).map(distLabel))].join(', ');
      return fail('distribution', `distribution ${label} is not offered by the service (${offered ? `it offers ${offered}` : `no ${want.name} at all`})`);
    }
    if (found.length > 1) return fail('distribution.arch', `distribution ${label} is ambiguous (${found.map((x) => x.arch).join(', ')}): give its arch`);
    distributionUri = found[0]!.uri!;
    label = distLabel(found[0]!);
  } else {
    return { failures };
  }
  const { id } = uriParams('os_get', distributionUri);
  const profileName = stringOf(i.osProfile);
  let base: Resolution['base'] | undefined;
  if (profileName !== undefined && !isUnknown(profileName) && !skip('osProfile')) {
    const bases = await client.osTemplate_getAll({ id });
    const b = (bases.distribProfiles ?? []).find((x) => x.name === profileName);
    if (b?.uri) base = { name: profileName, uri: b.uri };
    else failures.push({ property: 'osProfile', reason: `base profile "${profileName}" is not offered for ${label} (offered: ${(bases.distribProfiles ?? []).map((x) => x.name).join(', ') || 'none'})` });
  }
  const pkgs = await packagesOnService(client, id, label, Array.isArray(i.packages) && !skip('packages') ? (i.packages as unknown[]) : [], skip);
  failures.push(...pkgs.failures);
  return failures.length || !base ? { failures } : { resolution: { distributionUri, label, base, packageUris: pkgs.uris }, failures };
}

/** Package URIs by the engine's recipe (src/engine/package-choice.ts), in order; a name the service does not know fails at its index. */
async function packagesOnService(
  client: Client, distId: string, label: string, pkgs: readonly unknown[], skip: (property: string) => boolean,
): Promise<{ uris: string[]; failures: CheckFailure[] }> {
  const uris: string[] = [];
  const failures: CheckFailure[] = [];
  for (const [n, p] of pkgs.entries()) {
    const want: PackageSpec | undefined = typeof p === 'string' ? { name: p } : isRecord(p) && typeof p.name === 'string' ? { name: p.name, version: stringOf(p.version), arch: stringOf(p.arch) } : undefined;
    if (!want || containsUnknown(p) || skip(`packages[${n}]`)) continue;
    const hit = await findPackage(client, distId, want);
    if (hit?.uri) uris.push(hit.uri);
    else failures.push({ property: `packages[${n}]`, reason: `packages[${n}]: package "${wantedLabel(want)}" is not in ${label}` });
  }
  return { uris, failures };
}

/** Package URIs for the specs, in their order; any the distribution does not offer: a ProviderError (`input`) naming each. */
export async function resolvePackages(client: Client, distUri: string, specs: PackageSpec[]): Promise<string[]> {
  const d = await client.os_get(uriParams('os_get', distUri));
  const r = await packagesOnService(client, uriParams('os_get', distUri).id, distLabel(d) || distUri, specs, () => false);
  if (r.failures.length > 0) throw inputError(r.failures);
  return r.uris;
}

/** resolveOnService for a create or update (every value known): the resolution, or the failures as one ProviderError. */
async function resolved(client: Client, i: Props): Promise<Resolution> {
  const r = await resolveOnService(client, i);
  if (r.failures.length > 0 || !r.resolution) throw inputError(r.failures.length ? r.failures : [{ property: 'distribution', reason: 'the distribution cannot be resolved' }]);
  return r.resolution;
}

/**
 * The template's OS profile by the engine's rule and step (planOsProfile, settleOsProfile): made from the
 * named base profile; one made from another base (an adopted template, a change on the service) is replaced.
 */
async function settleProfile(client: Client, app: Appliance, appUri: string, base: Resolution['base']): Promise<SettledProfile> {
  const current = app.osProfileUri
    ? { uri: app.osProfileUri, standardProfileUri: (await client.applianceOSProfile_get(uriParams('applianceOSProfile_get', app.osProfileUri))).standardProfileUri }
    : undefined;
  return settleOsProfile(client, ids(appUri), planOsProfile(current, base));
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

const ids = (uri: string) => uriParams('appliance_get', uri);

/** What the service holds, by name (shapes.ts). */
const outputsOf = (app: Appliance, uri: string, distributionUri: string, osProfileUri: string, packageUris: string[]) =>
  ({ uri: app.uri ?? uri, revision: app.revision ?? 0, distributionUri, osProfileUri, packageUris });

export const appliance: Handler<ApplianceInputs> = {
  inputs: shapes.appliance.inputs,
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
        isUnknown(raw) ? raw
          : typeof raw === 'string' && SOFTWARE_URI.test(raw) ? raw
            : void s.fail('uri', `software items must be Software URIs ${uriShapeText('mySoftware_get')}, not ${JSON.stringify(raw)}`),
      ) ?? [],
      org: r.string('org', { pattern: uriPattern('org_get'), hint: `must be a URI ${uriShapeText('org_get')}` }),
      installation: checkInstallation(r),
    };
  },

  /** What only the service knows (distribution, base profile, packages), asked in `check` so that a preview fails on it. */
  async preflight(client, inputs, skip) {
    return (await resolveOnService(client, inputs, skip)).failures;
  },

  /**
   * Everything the service must know is looked up first (distribution, base profile, packages, software), so a
   * wrong value fails before the template exists; a failure after it was made deletes it again, so the corrected
   * `up` creates it anew (no 409, no `adopt`).
   */
  async create(client, inputs) {
    const { name, version, description, org } = inputs;
    const { distributionUri, base, packageUris } = await resolved(client, inputs);
    const mySoftwareList = await softwareList(client, inputs.software);
    let app: Appliance | undefined;
    if (inputs.adopt === true) {
      const list = await client.appliance_getAll({ params: { query: fiql.and(fiql.eq('name', name), fiql.eq('version', version)) } });
      app = (list.appliances ?? []).find((a) => a.name === name && a.version === version);
      if (app?.distributionUri && app.distributionUri !== distributionUri) {
        throw inputError([{ property: 'distribution', reason: `cannot adopt appliance ${name} ${version}: it is built on ${app.distributionUri}, not ${distributionUri}` }]);
      }
    }
    const made = app === undefined;
    app ??= await created(`appliance ${name} ${version}`, client.appliance_create({
      body: { name, version, distributionUri, description: description || undefined, orgUri: org },
    }));
    const uri = app.uri;
    if (!uri) throw new ProviderError('service', `the service returned no uri for appliance ${name} ${version}`);
    try {
      const profile = await settleProfile(client, app, uri, base);
      const osProfileUri = profile.uri;
      const { uid, aid } = ids(uri);
      const current = new Set(profile.packageUris ?? await profilePackageUris(client, osProfileUri));
      await changeProfilePackages(client, { uid, aid }, osProfileUri, { add: packageUris.filter((u) => !current.has(u)), remove: [] });
      const fresh = await client.appliance_get({ uid, aid });
      const wantDescription = description ?? fresh.description;
      const installProfile = profileOf(inputs);
      if (mySoftwareList.length > 0 || wantDescription !== fresh.description || installProfile) {
        await client.appliance_update({
          uid, aid,
          body: { ...fresh, description: wantDescription, mySoftwareList, ...(installProfile ? { installProfile } : {}) },
        });
      }
      const final = await client.appliance_get({ uid, aid });
      return { id: uri, outs: withOutputs('appliance', inputs, outputsOf(final, uri, distributionUri, osProfileUri, packageUris)) };
    } catch (e) {
      // Pulumi keeps no state of a create that failed: what it made must not stay behind (an adopted one stays).
      if (made) await removeObject(client, 'appliance', uri).catch(() => undefined);
      throw e;
    }
  },

  async read(client, id, props) {
    const app = await unlessGone(client.appliance_get(ids(id)));
    if (!app) return undefined;
    // Packages removed on the service drop out of `packages`, so the next diff adds them back.
    const osProfileUri = app.osProfileUri ?? stringOf(props.osProfileUri);
    const present = new Set(osProfileUri ? await profilePackageUris(client, osProfileUri) : []);
    const oldUris = stringsOf(props.packageUris);
    const packages: PackageSpec[] = [];
    const packageUris: string[] = [];
    props.packages.forEach((p, i) => {
      const u = oldUris[i];
      if (u && present.has(u)) { packages.push(p); packageUris.push(u); }
    });
    return {
      ...props,
      name: app.name, version: app.version, description: app.description,
      software: stringsOf((app.mySoftwareList ?? []).map((s) => s.uri)),
      packages, packageUris,
      uri: app.uri ?? id, revision: app.revision ?? 0,
      distributionUri: app.distributionUri ?? props.distributionUri,
      osProfileUri,
    };
  },

  async update(client, id, olds, news) {
    const { uid, aid } = ids(id);
    const app = await client.appliance_get({ uid, aid });
    const { distributionUri, base, packageUris } = await resolved(client, { ...news, distribution: app.distributionUri ?? stringOf(olds.distributionUri) ?? news.distribution });
    const profile = await settleProfile(client, app, id, base);
    const osProfileUri = profile.uri;
    // A profile made now holds its base's packages only: the old ones went with the old profile.
    const oldUris = profile.packageUris ? [] : stringsOf(olds.packageUris);
    const have = profile.packageUris ?? oldUris;
    await changeProfilePackages(client, { uid, aid }, osProfileUri, {
      add: packageUris.filter((u) => !have.includes(u)), remove: oldUris.filter((u) => !packageUris.includes(u)),
    });
    const sw = news.software;
    const haveSw = (app.mySoftwareList ?? []).map((s) => s.uri);
    // The service never shows a password, so a changed installation is told by the inputs, not by the service.
    const installChanged = JSON.stringify(olds.installation ?? null) !== JSON.stringify(news.installation ?? null);
    const installProfile = profileOf(news);
    if (JSON.stringify(haveSw) !== JSON.stringify(sw) || (news.description ?? undefined) !== (app.description ?? undefined) || installChanged) {
      await client.appliance_update({
        uid, aid,
        body: {
          ...app, description: news.description, mySoftwareList: await softwareList(client, sw),
          ...(installChanged ? { installProfile: installProfile ?? {} } : {}),
        },
      });
    }
    const final = await client.appliance_get({ uid, aid });
    return withOutputs('appliance', news, outputsOf(final, id, distributionUri, osProfileUri, packageUris));
  },

  async delete(client, id) {
    await removeObject(client, 'appliance', id);
  },
};
