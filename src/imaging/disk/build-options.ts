// What one image build takes and gives: shared by the build and its namespace child, apart from both.
import type { BuildHost } from '../build-host';
import type { DiskFormat } from '../formats';
import type { Digests } from './output';
import type { ProgressSink } from '../progress';
import type { ImageSboms } from '../sbom';
import type { ImageFile } from '../system/staging';
import type { SystemSettings } from '../stages';

export interface BuildImageOptions {
  /** The OS layer: a Debian root tree, read only (copied, never changed). */
  readonly layerDir: string;
  /** The layer's size, when known: its copy then goes to memory if there is room (../memory-folder.ts). */
  readonly layerBytes?: number | undefined;
  /** The install profile to apply; `diskMiB` is the virtual size of the disk. */
  readonly settings: SystemSettings;
  /** The layer carries cloud-init: it configures the network itself. */
  readonly cloudInit: boolean;
  readonly disk: DiskFormat;
  /** gzip the final file; name it `….<ext>.gz` (see imageFileName). */
  readonly compress: boolean;
  readonly files: readonly ImageFile[];
  /** Content of MANIFEST_PATH in the image. */
  readonly manifest: string;
  /** The finished image; its directory must exist. Replaced only when the new image is complete. */
  readonly outFile: string;
  /** The image's name in its SBOMs (default: the output file's name, which may be a temporary one). */
  readonly imageName?: string | undefined;
  /**
   * Where scratch files go (a private subdirectory is made and removed). In a user namespace the
   * namespace's root must be able to reach it (the OS layer cache's tmp folder is made for that).
   */
  readonly workDir: string;
  /** Who the tools touching the tree run as; default: this process's (currentBuildHost). */
  readonly host?: BuildHost | undefined;
  /** Whose namespace the layer's tree belongs to, when not `host`'s (an owner's range): the copy crosses over (default: `host`). */
  readonly layerHost?: BuildHost | undefined;
  readonly signal?: AbortSignal;
  readonly onProgress?: ProgressSink;
  /** Percentages this build reports span `from`..`to` (default 0..100): the caller's job may have done work before. */
  readonly progressRange?: { readonly from: number; readonly to: number };
  /**
   * Pinned inputs of a reproducible build: `seed` (a digest of the inputs) derives every id of the disk
   * (disk-ids.ts), `sourceDateEpoch` (seconds) clamps every time written. Absent: ids random, times now.
   */
  readonly reproducible?: { readonly seed: string; readonly sourceDateEpoch: number } | undefined;
  /**
   * Keep a reproducible build's base disk (the layer with the settings applied, base-disk.ts) in `dir`
   * for the next build of the same layer (`layerKey`, the OS layer cache's key) and settings.
   */
  /** `portableKey`: the layer's key without host ids (OsLayer.portableKey), which the base disk's ids derive from. */
  readonly baseCache?: { readonly dir: string; readonly layerKey: string; readonly portableKey?: string | undefined; readonly maxBytes?: number | undefined } | undefined;
}

export interface BuiltImage extends Digests {
  readonly virtualSizeBytes: number;
  /** The image's SPDX and CycloneDX documents (sbom/), for the caller to keep beside the image. */
  readonly sbom: ImageSboms;
}
