// Background generation of a machine image (wire contract §8): the template's manifest and its
// uploaded files go to the Imaging module's `buildImage`; the image record follows its progress and
// ends complete (with size and checksums), in error, or cancelled.
import { mkdir } from 'node:fs/promises';
import { posix } from 'node:path';
import type { Ctx } from '../context';
import type { BuildImageOptions, TargetFormatSpec } from '../ports';
import type { ImageDoc, StoredFile } from '../store/docs';
import type { Row } from '../store/store';
import { isTerminal } from '../store/store';
import { softwareFiles } from '../routes/software';
import { redactRecord } from '../../model/redact';
import { installProfile } from '../../model/resources';
import { DEFAULT_DISK_MIB } from '../install/profile';
import { failed, jobKey, setStatus, throttled } from './status';


/** What the image is built from, captured when the generation is asked for. */
export interface GenerationInput {
  format: TargetFormatSpec;
  manifest: string;
  files: BuildImageOptions['files'];
  fileName: string;
}

/** Manifest: template, OS, profile, resolved packages with versions, software (Imaging contract). */
export function generationInput(ctx: Ctx, appliance: Row<'appliance'>, format: TargetFormatSpec): GenerationInput {
  const d = appliance.doc;
  const dist = ctx.catalog.distributions.find((x) => x.dbId === d.distId);
  const profile = ctx.store.list('osprofile', appliance.owner, appliance.id)[0];
  const pkgs = (profile?.doc.pkgIds ?? []).flatMap((id) => {
    const p = ctx.catalog.getPackage(d.distId, id);
    return p ? [{ name: p.name, version: p.version, release: p.release, arch: p.arch, epoch: p.epoch }] : [];
  });
  const sw = softwareFiles(ctx, appliance.owner, d.softwareIds);
  const files = sw.map(({ artifact }) => {
    const a = artifact.doc;
    return {
      source: ctx.files.abs(a.file!.path),
      // installLocation is the destination directory of the artifact's file.
      destination: posix.join(a.installLocation ?? '/opt', a.file!.fileName),
      ...(a.rights ? { rights: a.rights } : {}),
      ...(a.ownerGroup ? { ownerGroup: a.ownerGroup } : {}),
    };
  });
  const manifest = {
    template: { name: d.name, version: d.version, description: d.description, revision: d.revision, uuid: d.uuid },
    os: dist ? { name: dist.name, version: dist.version, arch: dist.arch } : { id: d.distId },
    profile: profile ? { name: profile.doc.name, standardProfileUri: `distributions/${d.distId}/profiles/${profile.doc.profileId}` } : null,
    packages: pkgs,
    software: d.softwareIds.flatMap((id) => {
      const s = ctx.store.get('software', id);
      return s ? [{ name: s.doc.name, version: s.doc.version, files: sw.filter((x) => x.software.id === id).map((x) => x.artifact.doc.file!.fileName) }] : [];
    }),
    // Without password hashes: the manifest is readable by every user of the image.
    installProfile: redactRecord(installProfile, d.installProfile ?? {}),
    targetFormat: format.name,
  };
  const base = `${d.name}-${d.version}`.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[.]+/, '') || 'image';
  return { format, manifest: JSON.stringify(manifest, null, 2), files, fileName: `${base}.${format.extension.replace(/^\./, '')}` };
}

export function startGeneration(ctx: Ctx, image: Row<'image'>, input: GenerationInput): void {
  const id = image.id;
  ctx.jobs.start(jobKey('image', id), async (signal) => {
    const progress = throttled(ctx, 'image', id);
    const outRel = ctx.files.fresh('images', input.fileName);
    const workRel = ctx.files.fresh('tmp', `job-${id}`);
    try {
      await mkdir(ctx.files.abs(workRel), { recursive: true });
      setStatus(ctx, 'image', id, { message: 'generating', percentage: 1 });
      const result = await ctx.imaging.buildImage({
        disk: input.format.disk,
        diskSizeMiB: image.doc.installProfile.diskSize ?? DEFAULT_DISK_MIB,
        compress: image.doc.compress,
        files: input.files,
        manifest: input.manifest,
        outFile: ctx.files.abs(outRel),
        workDir: ctx.files.abs(workRel),
        signal,
        onProgress: (p) =>
          progress({
            percentage: Math.min(99, Math.max(0, Math.floor(p.percentage))),
            message: p.message,
            ...(p.bytesDone !== undefined ? { bytesLoaded: p.bytesDone } : {}),
            ...(p.bytesTotal !== undefined ? { bytesTotal: p.bytesTotal } : {}),
          }),
      });
      if (signal.aborted) throw new Error('cancelled');
      const file: StoredFile = {
        path: outRel,
        fileName: input.fileName,
        size: result.fileSize,
        sha256: result.sha256,
        md5: result.md5,
        mimeType: 'application/octet-stream',
        stored: ctx.store.now(),
      };
      const kept = ctx.store.tx(() => {
        const r = ctx.store.get('image', id);
        if (!r || isTerminal(r.doc.status)) return false;
        const doc: ImageDoc = { ...r.doc, file, status: { ...r.doc.status, complete: true, percentage: 100, message: 'generated' } };
        ctx.store.update('image', id, doc);
        return true;
      });
      if (!kept) await ctx.files.remove(outRel);
    } catch (e) {
      await ctx.files.remove(outRel);
      if (signal.aborted) setStatus(ctx, 'image', id, { cancelled: true, message: 'cancelled' });
      else setStatus(ctx, 'image', id, failed(e, 'generation failed'));
    } finally {
      await ctx.files.remove(workRel);
    }
  });
}
