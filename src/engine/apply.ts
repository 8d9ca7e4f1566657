// Carries out a plan: software first (uploads, in parallel), then the appliance, its OS profile and
// packages, then every image (generations in parallel, each waited for with the client's one
// waiter), each publication as soon as its image is ready. Abort (SIGINT, timeout) reaches every
// call; `waitForJob` cancels a running job on the service before it throws AbortedError.
import type { Client } from '../client';
import { AbortedError, isForgeError, messageOf } from '../errors';
import type { Appliance, Image, PublishImage } from '../model/resources';
import type { BundleFileDecl, Declaration } from './declaration';
import { ApplyError } from './errors';
import type { EventSink } from './events';
import { type FilePlan, type ImagePlan, idOf, type Plan, planPackages, type PublicationPlan, recordUri, type SoftwarePlan, applianceTag } from './plan';
import { changeProfilePackages, settleOsProfile } from './os-profile';
import { publishImageBody } from './publication-body';
import { installProfileOf } from './installation';
import { removeAll, type Removed } from './remove';
import type { LocalFile, Resolved } from './state';

export interface ApplyOptions {
  readonly signal?: AbortSignal | undefined;
  readonly onEvent?: EventSink | undefined;
  /** Poll delay of job waits (ms), default 250, for their first STEADY_POLL_MS; then it doubles up to at most max(pollMs, 1000). */
  readonly pollMs?: number | undefined;
  /** Longest wait for one generation or publication (ms). */
  readonly jobTimeoutMs?: number | undefined;
}

/** One entry per builder: its image and, when it publishes, its publication. */
export interface ImageResult {
  readonly builder: number;
  readonly format: string;
  readonly imageUri: string;
  readonly sha256?: string | undefined;
  readonly size?: number | undefined;
  readonly downloadUri?: string | undefined;
  /** The file name the service gives the image (e.g. `web-1.0.qcow2`). */
  readonly fileName?: string | undefined;
  /** The image existed for this revision, format and install profile. */
  readonly reused: boolean;
  readonly publication?: {
    readonly uri: string;
    readonly displayName: string;
    readonly cloudId?: string | undefined;
    readonly reused: boolean;
  } | undefined;
}

export interface ApplyResult {
  readonly applianceUri: string;
  readonly revision: number;
  readonly images: readonly ImageResult[];
  /** What `--prune` removed (the plan's removals), after every image and publication succeeded. */
  readonly removed: readonly Removed[];
}

interface Ctx {
  readonly client: Client;
  readonly o: ApplyOptions;
  readonly emit: EventSink;
}

export async function applyPlan(
  client: Client, decl: Declaration, resolved: Resolved, files: ReadonlyMap<string, LocalFile>, plan: Plan, o: ApplyOptions = {},
): Promise<ApplyResult> {
  const emit: EventSink = o.onEvent ?? (() => {});
  const c: Ctx = { client, o, emit };
  const { stack } = decl;

  // ---- Software components, in parallel
  emit({ type: 'phase', phase: 'software', title: 'Software bundles' });
  const mySoftwareList = await settleAll(plan.software.map((s) => ({ what: `bundle ${s.bundle.name}`, run: () => applySoftware(c, s) })), o.signal);

  // ---- Appliance, OS profile, packages
  emit({ type: 'phase', phase: 'appliance', title: `Appliance ${stack.name} ${stack.version}` });
  const installProfile = installProfileOf(stack.installation, true);
  const fields = { description: stack.description ?? '', tag: applianceTag(stack, files), mySoftwareList, installProfile };
  let app: Appliance;
  if (plan.appliance.action === 'create') {
    app = await client.appliance_create({
      body: { name: stack.name, version: stack.version, distributionUri: resolved.distribution.uri, ...fields },
      signal: o.signal,
    });
    emit({ type: 'step', message: `created appliance ${stack.name} ${stack.version} (${app.uri})` });
  } else {
    app = await client.appliance_get({ aid: idOf(plan.appliance.uri), signal: o.signal });
    if (plan.appliance.action === 'update') {
      app = await client.appliance_update({ aid: idOf(recordUri(app, 'appliance')), body: { uri: app.uri, ...fields }, signal: o.signal });
      emit({ type: 'step', message: `updated appliance ${stack.name} ${stack.version}: ${plan.appliance.changes.join(', ')}` });
    }
  }
  const aid = idOf(recordUri(app, 'appliance'));
  await applyOsProfile(c, plan, resolved, aid);

  // ---- Images and their publications: each image with its publications is one independent task.
  emit({ type: 'phase', phase: 'images', title: 'Images and publications' });
  const revision = (await client.appliance_get({ aid, signal: o.signal })).revision ?? 0;
  const perImage = await settleAll(
    plan.images.map((ip) => ({
      what: `image ${ip.format}`,
      run: () => applyImage(c, aid, ip, plan.publications.filter((p) => p.imageKey === ip.key)),
    })),
    o.signal,
  );
  const images = perImage.flat().sort((a, b) => a.builder - b.builder);

  // ---- Superseded images and their publications: only once everything above succeeded.
  let removed: Removed[] = [];
  if (plan.removals.length) {
    emit({ type: 'phase', phase: 'remove', title: 'Superseded images' });
    removed = await removeAll(client, plan.removals, { signal: o.signal, emit });
  }
  return { applianceUri: recordUri(app, 'appliance'), revision, images, removed };
}

/** Runs tasks in parallel to their end; an abort wins over other failures, then all failures are thrown together. */
async function settleAll<T>(tasks: ReadonlyArray<{ what: string; run: () => Promise<T> }>, signal?: AbortSignal): Promise<T[]> {
  const settled = await Promise.all(tasks.map((t) => t.run().then(
    (value) => ({ ok: true, value }) as const,
    (error: unknown) => ({ ok: false, what: t.what, error }) as const,
  )));
  const failures = settled.flatMap((r) => (r.ok ? [] : [{ what: r.what, error: r.error }]));
  const [first] = failures;
  if (!first) return settled.flatMap((r) => (r.ok ? [r.value] : []));
  const aborted = failures.find((f) => isForgeError(f.error, AbortedError));
  if (aborted) throw aborted.error;
  if (signal?.aborted) throw first.error;
  if (failures.length === 1 && !(first.error instanceof ApplyError)) throw first.error;
  throw new ApplyError(failures.flatMap((f) => (f.error instanceof ApplyError ? f.error.failures : [f])));
}


// ---- Software ----------------------------------------------------------------------------------

/** The bundle's component and its files; returns its entry in the appliance's software list. */
async function applySoftware(c: Ctx, s: SoftwarePlan): Promise<{ name: string; version: string; uri: string }> {
  const { client, o } = c;
  const b = s.bundle;
  let uri: string;
  if (s.action === 'create') {
    const rec = await client.mySoftware_create({
      body: { name: b.name, version: b.version, description: b.description },
      signal: o.signal,
    });
    uri = recordUri(rec, 'mySoftware');
    c.emit({ type: 'step', message: `created software ${b.name} ${b.version}` });
  } else {
    uri = s.uri;
    if (s.descriptionChanged) {
      await client.mySoftware_update({ msid: idOf(uri), body: { name: b.name, version: b.version, description: b.description ?? '' }, signal: o.signal });
      c.emit({ type: 'step', message: `updated software ${b.name} ${b.version}: description` });
    }
  }
  const msid = idOf(uri);
  await settleAll(
    s.files.filter((f) => f.action !== 'unchanged').map((f) => ({ what: `file ${b.name}/${f.name}`, run: () => applyFile(c, msid, b.name, f) })),
    o.signal,
  );
  return { name: b.name, version: b.version, uri };
}

async function applyFile(c: Ctx, msid: string, bundle: string, f: FilePlan): Promise<void> {
  const { client, o } = c;
  const label = `${bundle}/${f.name}`;
  if (f.action === 'create') return uploadFile(c, msid, label, f.decl);
  if (f.action === 'unchanged') return;
  const said = idOf(f.artifactUri);
  if (f.action === 'update' && f.metadataOnly) {
    await client.mySoftwareArtifact_update({ msid, said, body: artifactBody(f.decl), signal: o.signal });
    c.emit({ type: 'step', message: `updated file ${label}: install location, rights or owner` });
    return;
  }
  await client.mySoftwareArtifact_delete({ msid, said, signal: o.signal });
  if (f.action === 'update') return uploadFile(c, msid, label, f.decl);
  c.emit({ type: 'step', message: `removed file ${label}` });
}

function artifactBody(f: BundleFileDecl) {
  return {
    kind: 'SoftwareFile',
    name: f.name,
    fullName: f.name,
    origName: f.name,
    installLocation: f.destination,
    rights: f.rights,
    ownerGroup: f.ownerGroup,
  } as const;
}

/** Spec rule 4: an artifact container, then its binary. */
async function uploadFile(c: Ctx, msid: string, label: string, f: BundleFileDecl): Promise<void> {
  const { client, o } = c;
  const art = await client.mySoftwareArtifact_add({ msid, body: artifactBody(f), signal: o.signal });
  const id = `upload:${label}`;
  await client.upload({ msid, said: idOf(recordUri(art, 'softwareArtifact')), fileName: f.name }, { file: f.path }, {
    signal: o.signal,
    onProgress: (p) => c.emit({
      type: 'progress', id, label: `upload ${label}`,
      percentage: p.bytesTotal ? Math.floor((100 * p.bytesLoaded) / p.bytesTotal) : 0,
      bytesDone: p.bytesLoaded, bytesTotal: p.bytesTotal,
    }),
  });
  c.emit({ type: 'done', id, label: `upload ${label}`, ok: true });
  c.emit({ type: 'step', message: `uploaded ${label}` });
}

// ---- OS profile and packages --------------------------------------------------------------------

async function applyOsProfile(c: Ctx, plan: Plan, resolved: Resolved, aid: string): Promise<void> {
  const { client, o } = c;
  const profile = await settleOsProfile(client, { aid }, plan.osProfile, o.signal);
  // A new profile starts from its base packages: plan the change set against what it holds now.
  const pkgPlan = profile.packageUris ? planPackages(resolved, profile.packageUris) : plan.packages;
  if (profile.packageUris) {
    c.emit({ type: 'step', message: `${plan.osProfile.action === 'create' ? 'created' : 'replaced'} OS profile ${plan.osProfile.name}` });
  }
  const change = { add: pkgPlan.add.map((p) => p.uri), remove: pkgPlan.remove.map((p) => p.uri) };
  if (!(await changeProfilePackages(client, { aid }, profile.uri, change, o.signal))) return;
  const words = [
    pkgPlan.add.length ? `added ${pkgPlan.add.map((p) => p.label).join(', ')}` : '',
    pkgPlan.remove.length ? `removed ${pkgPlan.remove.length}` : '',
  ].filter(Boolean);
  c.emit({ type: 'step', message: `packages: ${words.join('; ')}` });
}

// ---- Images and publications --------------------------------------------------------------------

async function applyImage(c: Ctx, aid: string, ip: ImagePlan, pubs: readonly PublicationPlan[]): Promise<ImageResult[]> {
  const { client, o } = c;
  const id = `image:${ip.key}`;
  let image: Image;
  if (ip.action === 'generate') {
    // Sent without the signal: once the job exists it must be known, so that an abort cancels it.
    checkAborted(o.signal);
    image = await client.machineImage_generate({
      aid,
      body: {
        targetFormat: { name: ip.format },
        compress: ip.compress,
        ...(Object.keys(ip.installProfile).length ? { installProfile: { ...ip.installProfile } } : {}),
      },
    });
    c.emit({ type: 'step', message: `generating ${ip.format} image (${ip.reason})` });
  } else {
    image = ip.image;
    c.emit({ type: 'step', message: `reusing ${ip.format} image ${ip.uri}${ip.pending ? ' (waiting for its generation)' : ''}` });
  }
  if (ip.action === 'generate' || ip.pending) {
    await waitJob(c, image, id, `generate ${ip.format}`);
    image = await client.getByUri('image', recordUri(image, 'image'), { signal: o.signal });
  }
  const imageUri = recordUri(image, 'image');
  const itid = idOf(imageUri);
  const published = await settleAll(
    pubs.map((p) => ({
      what: `publication ${p.displayName}`,
      run: async () => ({ builder: p.builder, result: await applyPublication(c, aid, itid, image, p) }),
    })),
    o.signal,
  );
  return ip.builders.map((builder) => {
    const publication = published.find((p) => p.builder === builder);
    return {
      builder, format: ip.format, imageUri, sha256: image.sha256sum, size: image.fileSize ?? image.size,
      downloadUri: image.downloadUri, fileName: image.fileName, reused: ip.action === 'reuse',
      publication: publication?.result,
    };
  });
}

async function applyPublication(c: Ctx, aid: string, itid: string, image: Image, p: PublicationPlan): Promise<NonNullable<ImageResult['publication']>> {
  const { client, o } = c;
  const id = `publish:${p.builder}`;
  let pub: PublishImage;
  if (p.action === 'publish') {
    const b = p.target;
    const a = p.account;
    checkAborted(o.signal); // the POST itself goes without the signal, as for a generation
    pub = await client.applianceImage_publish({
      aid, itid,
      body: publishImageBody({
        imageUri: recordUri(image, 'image'), account: a,
        keystoneDomain: b.keystoneDomain, keystoneProject: b.keystoneProject, displayName: b.displayName, publicImage: b.publicImage,
      }),
    });
    c.emit({ type: 'step', message: `publishing ${p.displayName} (${p.reason})` });
  } else {
    pub = p.publication;
    c.emit({ type: 'step', message: `reusing publication ${p.displayName} (${pub.cloudId ?? 'pending'})` });
  }
  if (p.action === 'publish' || p.pending) {
    await waitJob(c, pub, id, `publish ${p.displayName}`);
    pub = await client.getByUri('publishImage', recordUri(pub, 'publishImage'), { signal: o.signal });
  }
  return { uri: recordUri(pub, 'publishImage'), displayName: p.displayName, cloudId: pub.cloudId, reused: p.action === 'reuse' };
}

function checkAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError('aborted before the job started');
}

/** How long a job wait keeps its first, short poll delay: a cold build of this example takes 15–30 s. */
const STEADY_POLL_MS = 60_000;

async function waitJob(c: Ctx, target: Image | PublishImage, id: string, label: string): Promise<void> {
  try {
    await c.client.waitForJob(target, {
      signal: c.o.signal,
      // A build of up to a minute is seen within 250 ms of its end (polls 250 ms apart for its first
      // minute; with 10 s, a 17 s cold build waited ~0.5 s on average for the poll that saw it), a
      // longer one within a second (the client's default backoff reaches 10 s): at most four small GETs
      // a second per running job, then one.
      pollMs: c.o.pollMs ?? 250,
      maxPollMs: Math.max(c.o.pollMs ?? 250, 1000),
      steadyMs: STEADY_POLL_MS,
      ...(c.o.jobTimeoutMs !== undefined ? { timeoutMs: c.o.jobTimeoutMs } : {}),
      onProgress: (s) => c.emit({ type: 'progress', id, label, percentage: s.percentage ?? 0, message: s.message || undefined }),
    });
    c.emit({ type: 'done', id, label, ok: true });
  } catch (e) {
    c.emit({ type: 'done', id, label, ok: false, message: messageOf(e) });
    throw e;
  }
}
