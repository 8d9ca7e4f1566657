// An image's SBOMs, kept beside its file as blobs of images/ (docs/images.md "SBOMs"), named after the image,
// removed with it (store/docs.ts imageFilePaths).
import { Readable } from 'node:stream';
import type { ImageSboms } from '../../imaging';
import { SBOM_FORMATS, type SbomFormat } from '../../model/sbom';
import type { Ctx } from '../context';
import type { ImageDoc, StoredFile } from '../store/docs';

/** The documents of a build, stored; on a failure those already written are removed. */
export async function storeSboms(ctx: Pick<Ctx, 'blobs' | 'store'>, sboms: ImageSboms, imageFileName: string, signal?: AbortSignal): Promise<NonNullable<ImageDoc['sbom']>> {
  const files: Partial<Record<SbomFormat, StoredFile>> = {};
  const text: Record<SbomFormat, string> = { spdx: sboms.spdx, cyclonedx: sboms.cyclonedx };
  try {
    for (const f of SBOM_FORMATS) {
      const bytes = Buffer.from(text[f.id], 'utf8');
      const fileName = `${imageFileName}${f.suffix}`;
      const w = await ctx.blobs.write(Readable.from([bytes]), 'images', fileName, bytes.length + 1, bytes.length, { signal });
      if (w.sha256 === undefined || w.md5 === undefined) throw new Error(`the blob store left the digests of ${fileName} for later`);
      files[f.id] = { path: w.key, fileName, size: w.size, sha256: w.sha256, md5: w.md5, mimeType: f.mediaType, stored: ctx.store.now() };
    }
  } catch (e) {
    for (const f of Object.values(files)) await ctx.blobs.remove(f.path);
    throw e;
  }
  return { packages: sboms.packages, files };
}
