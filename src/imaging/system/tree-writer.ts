// Every write of the build process into an image tree goes through here. A path is resolved beneath
// the tree as the image will see it (../tree.ts: links followed inside the tree, an absolute one restarts
// at its root, `..` stops there), so no write follows the host's links out of it; a file is created
// with O_EXCL (an existing file or link is removed first, never written through); and owners are
// the image's ids as the host stores them for the build's host (subordinate ids in a user namespace).
import { constants } from 'node:fs';
import { chmod, copyFile, lchown, lstat, mkdir, readdir, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BuildHost } from '../build-host';
import { ImagingError } from '../errors';
import { resolveParent } from '../tree';

/** Numeric owner in the image. */
export interface ImageOwner {
  readonly uid: number;
  readonly gid: number;
}

export const IMAGE_ROOT: ImageOwner = { uid: 0, gid: 0 };
const DIR_MODE = 0o755;

function segmentsOf(imagePath: string | readonly string[]): string[] {
  return typeof imagePath === 'string' ? imagePath.split('/').filter((s) => s !== '' && s !== '.') : [...imagePath];
}

export class TreeWriter {
  constructor(
    readonly root: string,
    readonly host: BuildHost,
  ) {}

  /** Set the host owner of `hostPath` (never following a link) to the image's `owner`. */
  async own(hostPath: string, owner: ImageOwner = IMAGE_ROOT): Promise<void> {
    await lchown(hostPath, this.host.hostId(owner.uid, 'uid'), this.host.hostId(owner.gid, 'gid'));
  }

  /**
   * The host path of an image path's last segment, its parents resolved beneath the tree; missing
   * parents are created (0755, image root) when `create`, else undefined is returned.
   */
  async locate(imagePath: string | readonly string[], create = true): Promise<string | undefined> {
    const segments = segmentsOf(imagePath);
    if (segments.length === 0) return this.root;
    const { dir, missing } = await resolveParent(this.root, segments);
    if (missing.length > 0 && !create) return undefined;
    for (const m of missing) {
      dir.push(m);
      const host = join(this.root, ...dir);
      await mkdir(host);
      await this.own(host);
      await chmod(host, DIR_MODE); // explicit: the process umask must not decide the image's modes
    }
    return join(this.root, ...dir, segments[segments.length - 1]!);
  }

  /** Whether the image path names a file, link or directory (its parents followed inside the tree). */
  async exists(imagePath: string): Promise<boolean> {
    const host = await this.locate(imagePath, false);
    return host !== undefined && (await lstat(host).catch(() => undefined)) !== undefined;
  }

  /** The host path ready for a new entry: an existing file or link is removed; a directory is refused. */
  private async fresh(imagePath: string | readonly string[]): Promise<string> {
    const host = (await this.locate(imagePath))!;
    const st = await lstat(host).catch(() => undefined);
    if (st?.isDirectory()) throw new ImagingError('input', `refused destination /${segmentsOf(imagePath).join('/')}: it is a directory in the image`);
    if (st) await unlink(host);
    return host;
  }

  /** Write a text file of the image with its mode and owner. */
  async writeText(imagePath: string | readonly string[], text: string, mode = 0o644, owner: ImageOwner = IMAGE_ROOT): Promise<string> {
    const host = await this.fresh(imagePath);
    await writeFile(host, text, { flag: 'wx', mode: 0o600 });
    await this.own(host, owner);
    await chmod(host, mode); // after chown, which clears set-id bits
    return host;
  }

  /** Copy a host file (already checked to be a regular file) into the image. */
  async copyIn(source: string, imagePath: string | readonly string[], mode: number, owner: ImageOwner = IMAGE_ROOT): Promise<string> {
    const host = await this.fresh(imagePath);
    await copyFile(source, host, constants.COPYFILE_EXCL);
    await this.own(host, owner);
    await chmod(host, mode);
    return host;
  }

  /** A symbolic link of the image (its target is the image's business: it is never followed here). */
  async symlink(target: string, imagePath: string): Promise<void> {
    const host = await this.fresh(imagePath);
    await symlink(target, host);
    await this.own(host);
  }

  /** A directory of the image (an existing one keeps its mode unless `mode` is given). */
  async mkdir(imagePath: string | readonly string[], owner: ImageOwner = IMAGE_ROOT, mode?: number): Promise<string> {
    const host = (await this.locate(imagePath))!;
    const st = await lstat(host).catch(() => undefined);
    if (st !== undefined && !st.isDirectory()) throw new ImagingError('input', `/${segmentsOf(imagePath).join('/')} is not a directory in the image`);
    if (st === undefined) await mkdir(host);
    await this.own(host, owner);
    if (st === undefined || mode !== undefined) await chmod(host, mode ?? DIR_MODE);
    return host;
  }

  /** Remove a file or link of the image, if there is one (a directory is left alone). */
  async remove(imagePath: string): Promise<void> {
    const host = await this.locate(imagePath, false);
    if (host === undefined) return;
    const st = await lstat(host).catch(() => undefined);
    if (st && !st.isDirectory()) await unlink(host);
  }

  /** Names in a directory of the image (none when it is missing). */
  async list(imagePath: string): Promise<string[]> {
    const host = await this.locate(imagePath, false);
    if (host === undefined) return [];
    const st = await lstat(host).catch(() => undefined);
    return st?.isDirectory() ? readdir(host) : [];
  }
}

