// The plan: what an apply would create, change, regenerate or publish (declaration.md
// "converges"). A pure function of the declaration, what it resolved to and what the service
// holds, so that `plan` changes nothing and `apply` does exactly what `plan` printed.
import { createHash } from 'node:crypto';
import { DecodeError } from '../errors';
import { jobState } from '../model/job-state';
import type { Appliance, Image, InstallProfile, PublishImage, SoftwareArtifact } from '../model/resources';
import { canonicalUri } from '../model/uris';
import type { BuilderDecl, BundleDecl, BundleFileDecl, Declaration, InstallProfileDecl, PublicationDecl, StackDecl } from './declaration';
import { installChanges, passwordFingerprint, preparePasswordFingerprint } from './installation';
import { ProblemList } from './problems';
import type { Removal } from './remove';
import type { LocalFile, Observed, Resolved, ResolvedAccount } from './state';

export type ChangeAction = 'create' | 'update' | 'unchanged';

/**
 * Each planned step is a union on its `action`: a variant holds exactly what its step needs (the URI of
 * what exists, the record reused), so that the apply reads it without assertions.
 */
export type AppliancePlan = {
  readonly name: string;
  readonly version: string;
  /** The declared description. */
  readonly description?: string | undefined;
  /** What differs, in words (empty when unchanged). */
  readonly changes: readonly string[];
} & (
  | { readonly action: 'create' }
  | {
    readonly action: 'update' | 'unchanged';
    readonly uri: string;
    /** What the service holds. */
    readonly current: { readonly description?: string | undefined; readonly revision?: number | undefined };
  }
);

/** `update` replaces the profile at `uri`: it was made from another base profile. */
export type OsProfilePlan = { readonly name: string; readonly standardProfileUri: string } & (
  | { readonly action: 'create' }
  | { readonly action: 'update' | 'unchanged'; readonly uri: string }
);

export interface PackageChange {
  readonly uri: string;
  readonly label: string;
}

export interface PackagesPlan {
  readonly action: ChangeAction;
  readonly add: readonly PackageChange[];
  readonly remove: readonly PackageChange[];
}

/** A declared file: new, or the artifact at `artifactUri` kept, rewritten (`metadataOnly`) or uploaded again. */
export type FilePlan =
  | { readonly action: 'create'; readonly name: string; readonly decl: BundleFileDecl; readonly local?: LocalFile | undefined }
  | {
    readonly action: 'update' | 'unchanged';
    readonly name: string;
    readonly decl: BundleFileDecl;
    readonly local?: LocalFile | undefined;
    readonly artifactUri: string;
    /** `update` rewrites the artifact's fields only; the content is the same. */
    readonly metadataOnly: boolean;
  }
  /** An artifact the bundle no longer declares. */
  | { readonly action: 'delete'; readonly name: string; readonly artifactUri: string };

export type SoftwarePlan = { readonly bundle: BundleDecl; readonly files: readonly FilePlan[] } & (
  | { readonly action: 'create' }
  | { readonly action: 'update' | 'unchanged'; readonly uri: string; readonly descriptionChanged: boolean }
);

export type ImagePlan = {
  /** Format, install profile and compression: builders with the same key share one image. */
  readonly key: string;
  readonly format: string;
  readonly installProfile: InstallProfileDecl;
  readonly compress: boolean;
  readonly builders: readonly number[];
  readonly reason: string;
} & (
  | { readonly action: 'generate' }
  /** `pending`: a generation is already running on the service; apply waits for it. */
  | { readonly action: 'reuse'; readonly pending: boolean; readonly uri: string; readonly image: Image }
);

export type PublicationPlan = {
  readonly builder: number;
  readonly imageKey: string;
  readonly displayName: string;
  readonly account: ResolvedAccount;
  readonly reason: string;
} & (
  /** What to publish: the builder's declared target. */
  | { readonly action: 'publish'; readonly target: PublicationDecl }
  | { readonly action: 'reuse'; readonly pending: boolean; readonly uri: string; readonly publication: PublishImage }
);

export interface Plan {
  readonly appliance: AppliancePlan;
  readonly osProfile: OsProfilePlan;
  readonly packages: PackagesPlan;
  readonly software: readonly SoftwarePlan[];
  readonly images: readonly ImagePlan[];
  readonly publications: readonly PublicationPlan[];
  /** With `prune`: superseded images and their publications, removed after a successful apply. */
  readonly removals: readonly Removal[];
  /** True when an apply would change anything on the service. */
  readonly hasChanges: boolean;
}

export interface PlanOptions {
  /** Plan publications (the Action's `publish` input); default true. */
  readonly publish?: boolean | undefined;
  /** Plan the removal of superseded images and their publications (`apply --prune`); default false. */
  readonly prune?: boolean | undefined;
}

/** Last segment of a resource URI: the id in its path. */
export function idOf(uri: string): string {
  return uri.replace(/\/+$/, '').split('/').at(-1) ?? '';
}

/**
 * The URI of a record the service answered (or the plan holds). Every record the service answers has
 * one; a missing one is a DecodeError naming the record, not a crash further on.
 */
export function recordUri(r: { readonly uri?: string | undefined }, root: string): string {
  if (!r.uri) throw new DecodeError('the service answered a record without its uri', `${root}.uri`);
  return r.uri;
}

/** The URIs of the records that have one. */
export function urisOf(records: ReadonlyArray<{ readonly uri?: string | undefined }> | undefined): string[] {
  return (records ?? []).flatMap((r) => (r.uri ? [r.uri] : []));
}

/** The same resource, whichever of the spellings `canonicalUri` accepts. */
export function sameUri(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && canonicalUri(a) === canonicalUri(b);
}

const SOFTWARE_TAG = 'forge-software:';

/**
 * The appliance's `tag` holds a hash of its software content. The service raises an appliance's
 * revision when the appliance changes, not when a component's files do: writing this tag makes a
 * content change a new revision, so images of the old content are never reused.
 */
export function softwareTag(bundles: readonly BundleDecl[], files: ReadonlyMap<string, LocalFile>): string {
  const h = createHash('sha256');
  for (const b of [...bundles].sort((x, y) => x.name.localeCompare(y.name))) {
    h.update(JSON.stringify([b.name, b.version, b.description ?? '']));
    for (const f of [...b.files].sort((x, y) => x.name.localeCompare(y.name))) {
      h.update(JSON.stringify([f.name, files.get(f.path)?.sha256 ?? '', f.destination ?? '', f.rights ?? '', f.ownerGroup ?? '']));
    }
  }
  return `${SOFTWARE_TAG}${h.digest('hex').slice(0, 32)}`;
}

/** An appliance an apply wrote (its tag carries the software hash): what `destroy` may remove. */
export function madeByForge(app: Pick<Appliance, 'tag'>): boolean {
  return (app.tag ?? '').startsWith(SOFTWARE_TAG);
}

const PASSWORDS = ' forge-passwords:';

const passwordSalt = (stack: StackDecl): string => `${stack.name}\u0000${stack.version}`;

/** Starts the passwords' fingerprint in the background (installation.ts): `applianceTag` then finds it made. */
export function preparePasswords(stack: StackDecl): Promise<void> {
  return preparePasswordFingerprint(stack.installation, passwordSalt(stack));
}

/** The tag an apply writes: the software hash, then the declared passwords' fingerprint when there are any. */
export function applianceTag(stack: StackDecl, files: ReadonlyMap<string, LocalFile>): string {
  const fp = passwordFingerprint(stack.installation, passwordSalt(stack));
  return `${softwareTag(stack.bundles, files)}${fp ? `${PASSWORDS}${fp}` : ''}`;
}

function tagParts(tag: string | undefined): [string, string] {
  const text = tag ?? '';
  const i = text.indexOf(PASSWORDS);
  return i < 0 ? [text, ''] : [text.slice(0, i), text.slice(i + PASSWORDS.length)];
}

export function imageKey(b: BuilderDecl): string {
  const p = b.installProfile;
  return `${b.type}|disk=${p.diskSize ?? '-'}|mem=${p.memorySize ?? '-'}|compress=${b.compress}`;
}

/** Declared fields must match; a field not declared matches whatever the service chose. */
function profileMatches(want: Readonly<Record<string, number | string | undefined>>, got: InstallProfile | undefined): boolean {
  return Object.entries(want).every(([k, v]) => v === undefined || (got as Record<string, unknown> | undefined)?.[k] === v);
}

function sameText(a: string | undefined, b: string | undefined): boolean {
  return (a ?? '') === (b ?? '');
}

export function computePlan(
  decl: Declaration,
  resolved: Resolved,
  observed: Observed,
  files: ReadonlyMap<string, LocalFile>,
  options: PlanOptions = {},
): Plan {
  const problems = new ProblemList(decl.file);
  const { stack } = decl;
  const app = observed.appliance;
  if (app && app.distributionUri && !sameUri(app.distributionUri, resolved.distribution.uri)) {
    problems.add(stack.os.at, `appliance "${stack.name}" version ${stack.version} already exists for another distribution; change its version to build on ${resolved.distribution.label}`);
  }
  problems.throwIfErrors();

  // ---- OS profile and packages
  const osProfile = planOsProfile(
    app?.osProfileUri && observed.osProfile ? { uri: app.osProfileUri, standardProfileUri: observed.osProfile.standardProfileUri } : undefined,
    resolved.profile,
  );
  const packages = planPackages(resolved, osProfile.action === 'unchanged' ? observed.profilePkgUris : [...resolved.profile.pkgUris]);

  // ---- Software
  const software = stack.bundles.map((b) => planSoftware(b, observed.software.get(b.name), files));
  const softwareChanged = software.some((s) => s.action !== 'unchanged');

  // ---- Appliance
  const changes: string[] = [];
  if (app) {
    if (!sameText(app.description, stack.description)) changes.push('description');
    const settings = installChanges(stack.installation, app.installProfile);
    if (settings.length) changes.push(`install profile (${settings.join(', ')})`);
    const want = stack.bundles.map((b) => `${b.name}@${b.version}`).sort().join(',');
    const have = (app.mySoftwareList ?? []).map((s) => `${s.name}@${s.version}`).sort().join(',');
    if (want !== have) changes.push('software list');
    const [haveSoftware, havePasswords] = tagParts(app.tag);
    const [wantSoftware, wantPasswords] = tagParts(applianceTag(stack, files));
    if (haveSoftware !== wantSoftware) changes.push('software content');
    if (havePasswords !== wantPasswords) changes.push('passwords (sensitive)');
  }
  const want = { name: stack.name, version: stack.version, description: stack.description, changes };
  const appliance: AppliancePlan = !app ? { ...want, action: 'create' } : {
    ...want, action: changes.length ? 'update' : 'unchanged', uri: recordUri(app, 'appliance'),
    current: { description: app.description, revision: app.revision },
  };

  // ---- Images: any change above makes a new appliance revision, so every image is regenerated.
  const contentChanged =
    appliance.action !== 'unchanged' || osProfile.action !== 'unchanged' || packages.action !== 'unchanged' || softwareChanged;
  const byKey = new Map<string, { first: BuilderDecl; builders: number[] }>();
  for (const b of decl.builders) {
    const group = byKey.get(imageKey(b));
    if (group) group.builders.push(b.index);
    else byKey.set(imageKey(b), { first: b, builders: [b.index] });
  }
  const images: ImagePlan[] = [...byKey].map(([key, { first: b, builders }]) => {
    const base = { key, format: b.type, installProfile: b.installProfile, compress: b.compress, builders };
    if (!app) return { ...base, action: 'generate', reason: 'new appliance' };
    if (contentChanged) return { ...base, action: 'generate', reason: 'the appliance changes' };
    const found = findImage(observed.images, b, app.revision);
    if (!found) return { ...base, action: 'generate', reason: `no image of revision ${app.revision ?? 0}` };
    const pending = jobState(found.status ?? {}) === 'running';
    return {
      ...base, action: 'reuse', pending, uri: recordUri(found, 'image'), image: found,
      reason: pending ? 'generation in progress' : `revision ${found.revision ?? 0}`,
    };
  });

  // ---- Publications
  const publications: PublicationPlan[] = [];
  if (options.publish !== false) {
    for (const b of decl.builders) {
      const pub = b.publication;
      const account = resolved.accounts.get(b.index);
      if (!pub || !account) continue;
      const img = images.find((i) => i.builders.includes(b.index));
      if (!img) continue;
      const base = { builder: b.index, imageKey: img.key, displayName: pub.displayName, account };
      const found = img.action === 'reuse' ? findPublication(observed.publications, img.uri, pub, account) : undefined;
      if (!found) {
        publications.push({ ...base, action: 'publish', target: pub, reason: img.action === 'generate' ? 'new image' : 'not published' });
        continue;
      }
      const pending = jobState(found.status ?? {}) === 'running';
      publications.push({
        ...base, action: 'reuse', pending, uri: recordUri(found, 'publishImage'), publication: found,
        reason: pending ? 'publication in progress' : 'published',
      });
    }
  }

  const removals = options.prune === true && app ? supersededImages(decl, app, observed, images, contentChanged) : [];

  const hasChanges =
    contentChanged || images.some((i) => i.action === 'generate') || publications.some((p) => p.action === 'publish') || removals.length > 0;
  return { appliance, osProfile, packages, software, images, publications, removals, hasChanges };
}

/**
 * The appliance's images an apply leaves behind, with their publications: every image when the
 * appliance changes (a new revision makes them all old), else images of older revisions, failed or
 * cancelled ones, and other images of a planned builder than the one reused. An image of the current
 * revision that no builder of this run makes stays: a run of some builders (a matrix job) must not
 * remove the images of the others.
 */
function supersededImages(decl: Declaration, app: Appliance, observed: Observed, images: readonly ImagePlan[], contentChanged: boolean): Removal[] {
  const used = new Set(images.flatMap((i) => (i.action === 'reuse' ? [canonicalUri(i.uri)] : [])));
  const current = app.revision ?? 0;
  const why = (img: Image): string | undefined => {
    const revision = img.revision ?? 0;
    const state = jobState(img.status ?? {});
    if (used.has(canonicalUri(recordUri(img, 'image')))) return undefined;
    if (contentChanged) return `superseded: the appliance changes (image of revision ${revision})`;
    if (revision < current) return `superseded: revision ${revision}, the appliance is at ${current}`;
    if (state === 'failed' || state === 'cancelled') return `${state} generation`;
    if (decl.builders.some((b) => imageMatches(img, b))) return 'superseded: another image of this builder is used';
    return undefined;
  };
  const out: Removal[] = [];
  for (const img of observed.images) {
    const reason = why(img);
    if (!reason) continue;
    const uri = recordUri(img, 'image');
    const format = img.targetFormat?.name ?? '?';
    out.push({
      kind: 'image', uri, name: format, reason,
      before: { uri, format, revision: img.revision ?? 0, state: jobState(img.status ?? {}), sha256: img.sha256sum || undefined },
    });
    for (const p of observed.publications.filter((x) => sameUri(x.imageUri, uri))) {
      const puri = recordUri(p, 'publishImage');
      out.push({
        kind: 'publication', uri: puri, name: p.displayName ?? '?', reason: `its image goes (${format}, revision ${img.revision ?? 0})`,
        before: { uri: puri, imageUri: uri, cloudId: p.cloudId || undefined },
      });
    }
  }
  return out;
}

/**
 * The one rule of the OS profile, for the engine and the Pulumi provider: an appliance's profile is made
 * from the declared base profile. None yet: create one; one made from another base: replace it (the
 * appliance, its name, version and images' history stay; its packages are planned anew); else keep it.
 */
export function planOsProfile(
  current: { readonly uri: string; readonly standardProfileUri?: string | undefined } | undefined,
  base: { readonly name: string; readonly uri: string },
): OsProfilePlan {
  const want = { name: base.name, standardProfileUri: base.uri };
  if (!current) return { ...want, action: 'create' };
  return { ...want, action: sameUri(current.standardProfileUri, base.uri) ? 'unchanged' : 'update', uri: current.uri };
}

export function planPackages(resolved: Resolved, current: readonly string[]): PackagesPlan {
  const want = new Map(resolved.packages.map((p) => [p.uri, p.label]));
  const have = new Set(current);
  const add = [...want].filter(([uri]) => !have.has(uri)).map(([uri, label]) => ({ uri, label }));
  // Packages of the base profile stay: the declaration lists what it adds to the profile.
  const remove = current
    .filter((uri) => !want.has(uri) && !resolved.profile.pkgUris.has(uri))
    .map((uri) => ({ uri, label: uri }));
  return { action: add.length || remove.length ? 'update' : 'unchanged', add, remove };
}

function planSoftware(
  bundle: BundleDecl,
  found: { record: { uri?: string | undefined; description?: string | undefined }; artifacts: readonly SoftwareArtifact[] } | undefined,
  files: ReadonlyMap<string, LocalFile>,
): SoftwarePlan {
  const local = (f: BundleFileDecl) => files.get(f.path);
  if (!found) {
    return { action: 'create', bundle, files: bundle.files.map((f) => ({ action: 'create', name: f.name, decl: f, local: local(f) })) };
  }
  const byName = new Map(found.artifacts.map((a) => [a.name ?? '', a]));
  const filePlans: FilePlan[] = bundle.files.map((f): FilePlan => {
    const a = byName.get(f.name);
    const l = local(f);
    if (!a) return { action: 'create', name: f.name, decl: f, local: l };
    const kept = { name: f.name, decl: f, local: l, artifactUri: recordUri(a, 'softwareArtifact') };
    // The service fills sha256sum when it stores the upload: the content hash it vouches for.
    if (!a.sha256sum || a.sha256sum !== l?.sha256) return { ...kept, action: 'update', metadataOnly: false };
    const meta = sameText(a.installLocation, f.destination) && sameText(a.rights, f.rights) && sameText(a.ownerGroup, f.ownerGroup);
    return { ...kept, action: meta ? 'unchanged' : 'update', metadataOnly: !meta };
  });
  const declared = new Set(bundle.files.map((f) => f.name));
  for (const a of found.artifacts) {
    if (!declared.has(a.name ?? '')) filePlans.push({ action: 'delete', name: a.name ?? '?', artifactUri: recordUri(a, 'softwareArtifact') });
  }
  const descriptionChanged = !sameText(found.record.description, bundle.description);
  const changed = descriptionChanged || filePlans.some((f) => f.action !== 'unchanged');
  return { action: changed ? 'update' : 'unchanged', bundle, uri: recordUri(found.record, 'mySoftware'), descriptionChanged, files: filePlans };
}

/** An image of this builder's format, compression and install profile, whatever its revision or state. */
function imageMatches(i: Image, b: BuilderDecl): boolean {
  return i.targetFormat?.name === b.type &&
    (i.compress ?? false) === b.compress &&
    profileMatches(b.installProfile as Record<string, number | undefined>, i.installProfile);
}

/** The newest usable image of this revision, format and install profile; a failed or cancelled one is not. */
function findImage(images: readonly Image[], b: BuilderDecl, revision: number | undefined): Image | undefined {
  return images
    .filter((i) =>
      imageMatches(i, b) &&
      (i.revision ?? 0) === (revision ?? 0) &&
      ['complete', 'running'].includes(jobState(i.status ?? {})))
    .sort((x, y) => rank(y) - rank(x) || (y.dbId ?? 0) - (x.dbId ?? 0))[0];
}

function rank(r: { status?: { complete?: boolean | undefined } | undefined }): number {
  return r.status?.complete ? 1 : 0;
}

function keystoneBase(u: string | undefined): string {
  return (u ?? '').replace(/\/+$/, '').replace(/\/v3$/, '');
}

function findPublication(pubs: readonly PublishImage[], imageUri: string, p: PublicationDecl, account: ResolvedAccount): PublishImage | undefined {
  return pubs
    .filter((x) =>
      sameUri(x.imageUri, imageUri) &&
      x.displayName === p.displayName &&
      x.keystoneDomain === p.keystoneDomain &&
      x.keystoneProject === p.keystoneProject &&
      (x.publicImage ?? false) === p.publicImage &&
      keystoneBase(x.credAccount?.keystoneUrl) === keystoneBase(account.keystoneUrl) &&
      x.credAccount?.login === account.login &&
      ['complete', 'running'].includes(jobState(x.status ?? {})))
    .sort((x, y) => rank(y) - rank(x) || (y.dbId ?? 0) - (x.dbId ?? 0))[0];
}
