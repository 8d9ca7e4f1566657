// A bootable Debian 12 qcow2 for the boot-check tests, made by hand from a mmdebstrap tree with the
// recipe of ../shared/design/real-images.md (MBR + BIOS GRUB core.img without grub-install, ext4 `root`
// written by `mke2fs -d`, serial console on ttyS0). Built once and cached under /var/tmp.
// STAND-IN: once the server's real image pipeline (issue 9, items 1–2) is on main, these tests should
// boot an image built by it instead, and this file goes away.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Bump when the recipe changes: a cached image of another recipe is rebuilt. */
const RECIPE = 1;
const CACHE = '/var/tmp/appliance-forge-boot-fixture';
/** A tree another step of this machine's session already made (read only: it is copied, never changed). */
const SHARED_TREE = '/var/tmp/af-tree';
const MIRROR = 'http://deb.debian.org/debian';
const PACKAGES = 'linux-image-cloud-amd64,systemd-sysv,udev,ifupdown,isc-dhcp-client,nginx,curl';
const DISK_MIB = 1024;

/** The root password set in the fixture (a test constant: the image is throwaway and booted with -snapshot). */
export const FIXTURE_ROOT_PASSWORD = 'af-boot-fixture-Pw1';

export interface BootFixture {
  readonly qcow2: string;
  readonly user: 'root';
  readonly password: string;
}

function hasKernel(tree: string): boolean {
  return existsSync(path.join(tree, 'boot')) && readdirSync(path.join(tree, 'boot')).some((f) => f.startsWith('vmlinuz-'));
}

async function sourceTree(work: string): Promise<string> {
  if (hasKernel(SHARED_TREE)) return SHARED_TREE;
  const tree = path.join(CACHE, 'tree');
  if (!hasKernel(tree)) {
    const tmp = path.join(work, 'tree.new');
    await run('mmdebstrap', ['--variant=apt', `--include=${PACKAGES}`, '--dpkgopt=path-exclude=/usr/share/{man,doc,locale}/*', 'bookworm', tmp, MIRROR], { maxBuffer: 64 << 20 });
    rmSync(tree, { recursive: true, force: true });
    renameSync(tmp, tree);
  }
  return tree;
}

/** The cached fixture image, built on first use (about a minute: copy, chpasswd, mke2fs -d, GRUB, qemu-img). */
export async function bootFixture(): Promise<BootFixture> {
  const qcow2 = path.join(CACHE, `debian12-r${RECIPE}.qcow2`);
  const done: BootFixture = { qcow2, user: 'root', password: FIXTURE_ROOT_PASSWORD };
  if (existsSync(qcow2)) return done;
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(path.join(CACHE, 'work-'));
  try {
    const tree = path.join(work, 'tree');
    await run('cp', ['-a', await sourceTree(work), tree]);
    await run('sh', ['-c', `printf 'root:%s\\n' "$1" | chroot "$2" chpasswd`, 'sh', FIXTURE_ROOT_PASSWORD, tree]);
    const kernel = readdirSync(path.join(tree, 'boot')).find((f) => f.startsWith('vmlinuz-'))!;
    const version = kernel.slice('vmlinuz-'.length);
    writeFileSync(path.join(tree, 'etc/fstab'), 'LABEL=root / ext4 errors=remount-ro 0 1\n');
    writeFileSync(path.join(tree, 'etc/hostname'), 'af-boot-fixture\n');
    mkdirSync(path.join(tree, 'boot/grub'), { recursive: true });
    writeFileSync(path.join(tree, 'boot/grub/grub.cfg'), [
      'set timeout=0',
      'search --no-floppy --label root --set=root',
      `linux /boot/vmlinuz-${version} root=LABEL=root ro console=tty0 console=ttyS0,115200n8`,
      `initrd /boot/initrd.img-${version}`,
      'boot',
      '',
    ].join('\n'));
    const raw = path.join(work, 'disk.raw');
    await run('truncate', ['-s', `${DISK_MIB}M`, raw]);
    await run('sh', ['-c', 'echo "start=2048, type=83, bootable" | sfdisk -q "$1"', 'sh', raw]);
    await run('mke2fs', ['-q', '-t', 'ext4', '-L', 'root', '-d', tree, '-E', 'offset=1048576', raw, `${(DISK_MIB - 1) * 1024}k`]);
    const core = path.join(work, 'core.img');
    await run('grub-mkimage', ['-O', 'i386-pc', '-p', '(hd0,msdos1)/boot/grub', '-o', core,
      'biosdisk', 'part_msdos', 'ext2', 'normal', 'linux', 'search', 'search_label', 'configfile', 'echo']);
    await run('dd', ['if=/usr/lib/grub/i386-pc/boot.img', `of=${raw}`, 'bs=440', 'count=1', 'conv=notrunc', 'status=none']);
    await run('dd', [`if=${core}`, `of=${raw}`, 'bs=512', 'seek=1', 'conv=notrunc', 'status=none']);
    const tmp = path.join(work, 'out.qcow2');
    await run('qemu-img', ['convert', '-f', 'raw', '-O', 'qcow2', raw, tmp]);
    renameSync(tmp, qcow2);
    return done;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `node fixture.js` (after an esbuild bundle) builds the cache ahead of a test run. */
if (require.main === module) {
  bootFixture().then((f) => console.log(f.qcow2), (e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
