// Background generation of a machine image (wire contract §8; README "Real images"): a build slot,
// then the OS layer (from the cache, or mmdebstrap from the mirror: 0–40 %), then the disk stage
// (software, settings, bootable disk, format: 40–99 %). The image record follows the progress and
// ends complete (with size and checksums), in error, or cancelled.
import { posix } from 'node:path';
import type { Ctx } from '../context';
import type { TargetFormatSpec } from '../ports';
import { imageFilePaths, type ImageDoc, type StoredFile } from '../store/docs';
import type { Row } from '../store/store';
import { isTerminal } from '../../model/job-state';
import { redactRecord } from '../../model/redact';
import { installProfile, type InstallProfile } from '../../model/resources';
import { badRequest } from '../service-error';
import { packageRequestsOf } from '../install/packages';
import { systemSettingsOf } from '../install/system-settings';
import type { ImageFile, ImageRecipe, SystemSettings } from '../../imaging';
import { osLayerSpecOf } from '../../imaging/recipe';
import { reproducibleRecord } from '../../imaging/reproducible';
import { jobKey, setStatus, throttled } from './status';
import { failedJob, type JobStage } from './job-errors';
import { assertDiskRoom } from './quota';
import { storeSboms } from './sbom-files';
import { uris } from '../uris';
import { OS_RELEASES, releaseById, releaseLabel } from '../../model/releases';

/** What the image is built from, captured when the generation is asked for (the library's recipe but `compress`, the image's own). */
export interface GenerationInput {
  readonly format: TargetFormatSpec;
  readonly recipe: Omit<ImageRecipe, 'compress'>;
  readonly settings: SystemSettings;
  readonly files: readonly ImageFile[];
  readonly fileName: string;
}

/** Manifest: template, OS, profile, packages with the versions installed, software (README "Real images"). */
export function generationInput(ctx: Ctx, appliance: Row<'appliance'>, format: TargetFormatSpec, profileOfImage: InstallProfile): GenerationInput {
  const d = appliance.doc;
  const dist = ctx.catalog.distributions.find((x) => x.dbId === d.distId);
  // The template's distribution is the release its OS layer is built from.
  const suite = releaseById(d.distId)?.codename;
  if (!dist || !suite) throw badRequest(`images of ${dist?.name ?? 'distribution'} ${dist?.version ?? d.distId} cannot be built: this service builds ${OS_RELEASES.map(releaseLabel).join(' and ')} images`);
  const profile = ctx.store.list('osprofile', appliance.owner, appliance.id)[0];
  if (!profile) throw badRequest('the appliance has no OS profile yet (POST …/osprofile first)');
  const asked = packageRequestsOf(ctx.catalog, profile.doc);
  const settings = systemSettingsOf(d.name, profileOfImage);
  const cloudInit = format.credAccountType === 'openstack';
  const os = osLayerSpecOf({ suite, profile: asked.profile, packages: asked.packages, disk: format.disk, cloudInit, settings, mirror: ctx.imaging.mirror });
  const sw = softwareFiles(ctx, appliance.owner, d.softwareIds);
  const files = sw.map(({ artifact }): ImageFile => {
    const a = artifact.doc;
    return {
      source: ctx.files.abs(a.file!.path),
      // installLocation is the destination directory of the artifact's file.
      destination: posix.join(a.installLocation ?? '/opt', a.file!.fileName),
      rights: a.rights || undefined,
      ownerGroup: a.ownerGroup || undefined,
    };
  });
  // Not the uuid: the server draws it, and the image holds only what a rebuild elsewhere gives again.
  const template = { name: d.name, version: d.version, description: d.description, revision: d.revision };
  const software = d.softwareIds.flatMap((id) => {
    const s = ctx.store.get('software', id);
    return s ? [{ name: s.doc.name, version: s.doc.version, files: sw.filter((x) => x.software.id === id).map((x) => x.artifact.doc.file!.fileName) }] : [];
  });
  const manifest: ImageRecipe['manifest'] = (installed, pinned) => {
    const byName = new Map(installed.map((p) => [p.name, p]));
    return JSON.stringify(
      {
        template,
        os: { name: dist.name, version: dist.version, suite, arch: os.arch, kernel: os.kernel, cloudInit: os.cloudInit, mirror: os.mirror },
        profile: { name: profile.doc.name, base: os.profile, standardProfileUri: uris.profile(d.distId, profile.doc.profileId) },
        // The template's own packages as installed (pins included), then everything dpkg installed.
        packages: os.packages.map((p) => ({ name: p.name, pinned: p.version || undefined, installed: byName.get(p.name)?.version ?? null })),
        installed,
        software,
        // Without password hashes: the manifest is readable by every user of the image.
        installProfile: redactRecord(installProfile, profileOfImage),
        targetFormat: format.name,
        reproducible: pinned && reproducibleRecord(os, pinned),
      },
      null,
      2,
    );
  };
  const base = `${d.name}-${d.version}`.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[.]+/, '') || 'image';
  return { format, recipe: { os, disk: format.disk, reproducible: true, manifest }, settings, files, fileName: `${base}.${format.extension.replace(/^\./, '')}` };
}

/** setTimeout's bound (2^31 - 1 ms, about 24.8 days): a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export function startGeneration(ctx: Ctx, image: Row<'image'>, input: GenerationInput): void {
  const id = image.id;
  ctx.jobs.start(jobKey('image', id), async (signal) => {
    const progress = throttled(ctx, 'image', id);
    const outRel = ctx.files.fresh('images', input.fileName);
    // The build time limit aborts the same signal plumbing as a cancel: child processes are killed, files removed.
    const overtime = new AbortController();
    const build = AbortSignal.any([signal, overtime.signal]);
    let timer: NodeJS.Timeout | undefined;
    let stage: JobStage = 'preparation';
    try {
      const releaseSlot = await ctx.buildSlots.acquire(
        signal,
        (ahead) => setStatus(ctx, 'image', id, { message: `waiting for a build slot (${ahead + 1} build${ahead === 0 ? '' : 's'} ahead)` }),
        image.owner,
      );
      timer = setTimeout(() => overtime.abort(), Math.min(ctx.limits.buildTimeoutMs, MAX_TIMER_MS));
      let result;
      try {
        // Checked again now: the space free when the generation was asked for may be gone after the wait.
        assertDiskRoom(ctx, input.settings.diskMiB);
        const order = { recipe: { ...input.recipe, compress: image.doc.compress }, settings: input.settings, files: input.files, outFile: ctx.files.abs(outRel), imageName: input.fileName };
        result = await ctx.imaging.build(order, build, (p) => {
          stage = p.stage;
          progress({ percentage: Math.min(99, Math.max(1, p.percentage)), message: p.message, bytesLoaded: p.bytesDone, bytesTotal: p.bytesTotal });
        });
      } finally {
        clearTimeout(timer);
        releaseSlot();
      }
      if (build.aborted) throw new Error('cancelled');
      const file: StoredFile = {
        path: outRel,
        fileName: input.fileName,
        size: result.fileSize,
        sha256: result.sha256,
        md5: result.md5,
        mimeType: 'application/octet-stream',
        stored: ctx.store.now(),
      };
      const sbom = await storeSboms(ctx, result.sbom, input.fileName);
      const kept = ctx.store.tx(() => {
        const r = ctx.store.get('image', id);
        if (!r || isTerminal(r.doc.status)) return false;
        const doc: ImageDoc = { ...r.doc, file, sbom, status: { ...r.doc.status, complete: true, percentage: 100, message: 'generated' } };
        ctx.store.update('image', id, doc);
        return true;
      });
      if (!kept) for (const path of [outRel, ...imageFilePaths({ ...image.doc, sbom })]) await ctx.files.remove(path);
    } catch (e) {
      // Files first: once the status says the job ended, nothing of it is left on disk.
      await ctx.files.remove(outRel);
      if (signal.aborted) setStatus(ctx, 'image', id, { cancelled: true, message: 'cancelled' });
      else if (overtime.signal.aborted) setStatus(ctx, 'image', id, failedJob(ctx, 'image', id, e, stage, overtimeWords(ctx.limits.buildTimeoutMs)));
      else setStatus(ctx, 'image', id, failedJob(ctx, 'image', id, e, stage));
    } finally {
      clearTimeout(timer);
    }
  });
}

function overtimeWords(limitMs: number): string {
  const minutes = limitMs / 60_000;
  const limit = minutes >= 1 ? `${Math.round(minutes)} minute${Math.round(minutes) === 1 ? '' : 's'}` : `${Math.round(limitMs / 1000)} seconds`;
  return `the build ran longer than this server's limit of ${limit} and was stopped; make the image smaller (fewer packages or files), or ask the server's operator to raise the limit`;
}

/** Every uploaded file of a template's software, with where it goes and its rights (Imaging contract). */
function softwareFiles(ctx: Ctx, owner: string, softwareIds: number[]): Array<{ software: Row<'software'>; artifact: Row<'artifact'> }> {
  return softwareIds.flatMap((id) => {
    const s = ctx.store.get('software', id);
    if (!s || s.owner !== owner) return [];
    return ctx.store.list('artifact', owner, id).filter((a) => a.doc.file).map((artifact) => ({ software: s, artifact }));
  });
}
