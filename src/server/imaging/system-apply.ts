// Stage 2 of a real image build: the install profile and the appliance's files applied to a private
// copy of the OS layer tree (docs/contracts.md "Imaging"). Every file is written through the tree's
// own paths (see tree.ts); users and groups come from the image's own tools (accounts.ts).
import { access, lstat, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AbortedError } from '../../errors';
import { applyAccounts } from './accounts';
import { ImagingError } from './errors';
import { placeFiles, type ImageFile } from './staging';
import type { SystemSettings } from './system';

export interface ApplySystemOptions {
  readonly settings: SystemSettings;
  readonly files: readonly ImageFile[];
  /** Content of MANIFEST_PATH in the image. */
  readonly manifest: string;
  /** cloud-init configures the network (and the ssh host keys) itself: no ifupdown stanza is written. */
  readonly cloudInit: boolean;
  readonly signal?: AbortSignal | undefined;
}

/** The swap file the first boot creates (mke2fs -d would store zeros as holes, which swapon refuses). */
export const SWAP_FILE = '/swapfile';
const SWAP_UNIT = 'appliance-forge-swapfile.service';

const HOSTNAME = /^(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const ZONE = /^[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+)*$/;
const XKB = /^[A-Za-z0-9_()+-]*$/;

/** Write a text file of the image (an existing file or link is replaced, never written through). */
async function put(tree: string, path: string, text: string, mode = 0o644): Promise<void> {
  const host = join(tree, path);
  await mkdir(join(host, '..'), { recursive: true, mode: 0o755 });
  await rm(host, { force: true });
  await writeFile(host, text, { flag: 'wx', mode });
}

const exists = (p: string): Promise<boolean> => access(p).then(() => true, () => false);

export async function applySystem(tree: string, o: ApplySystemOptions): Promise<void> {
  const s = o.settings;
  const step = (): void => {
    if (o.signal?.aborted) throw new AbortedError('image build aborted');
  };
  if (!HOSTNAME.test(s.hostname)) throw new ImagingError('input', `refused hostname ${JSON.stringify(s.hostname)}: expected one DNS label`);
  await put(tree, 'etc/hostname', `${s.hostname}\n`);
  await put(tree, 'etc/hosts', `127.0.0.1\tlocalhost\n127.0.1.1\t${s.hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n`);

  let fstab = 'LABEL=root\t/\text4\terrors=remount-ro\t0\t1\n';
  if (s.swapMiB > 0) {
    if (!Number.isSafeInteger(s.swapMiB)) throw new ImagingError('input', `refused swap size ${s.swapMiB} MiB: expected a whole number`);
    fstab += `${SWAP_FILE}\tnone\tswap\tsw\t0\t0\n`;
    await put(tree, `etc/systemd/system/${SWAP_UNIT}`, swapUnit(s.swapMiB));
    // Pulled in by the swap unit systemd generates from fstab (a .requires directory applies to generated units).
    await mkdir(join(tree, 'etc/systemd/system/swapfile.swap.requires'), { recursive: true });
    await rm(join(tree, `etc/systemd/system/swapfile.swap.requires/${SWAP_UNIT}`), { force: true });
    await symlink(`../${SWAP_UNIT}`, join(tree, `etc/systemd/system/swapfile.swap.requires/${SWAP_UNIT}`));
  }
  await put(tree, 'etc/fstab', fstab);

  const zone = s.timezone ?? 'Etc/UTC';
  if (!ZONE.test(zone) || !(await exists(join(tree, 'usr/share/zoneinfo', zone)))) {
    throw new ImagingError('input', `unknown time zone ${JSON.stringify(zone)}: no /usr/share/zoneinfo/${zone} in the image`);
  }
  await rm(join(tree, 'etc/localtime'), { force: true });
  await symlink(`/usr/share/zoneinfo/${zone}`, join(tree, 'etc/localtime'));
  await put(tree, 'etc/timezone', `${zone}\n`);

  if (s.keyboard) {
    const { layout, variant = '' } = s.keyboard;
    if (!XKB.test(layout) || layout === '' || !XKB.test(variant)) throw new ImagingError('input', `refused keyboard ${JSON.stringify(s.keyboard)}`);
    await put(tree, 'etc/default/keyboard', `XKBMODEL="pc105"\nXKBLAYOUT="${layout}"\nXKBVARIANT="${variant}"\nXKBOPTIONS=""\nBACKSPACE="guess"\n`);
  }
  if (s.welcomeMessage !== undefined) await put(tree, 'etc/motd', s.welcomeMessage.endsWith('\n') ? s.welcomeMessage : `${s.welcomeMessage}\n`);
  if (!o.cloudInit) await put(tree, 'etc/network/interfaces.d/eth0', 'allow-hotplug eth0\niface eth0 inet dhcp\n');
  step();

  await applyAccounts(tree, s, o.signal);
  step();
  await configureSsh(tree, s.rootUser.disablePasswordLogin);
  await forgetMachine(tree);
  step();
  await placeFiles(tree, o.files, o.manifest, o.signal);
}

function swapUnit(mib: number): string {
  return `[Unit]
Description=Create the swap file ${SWAP_FILE} (first boot)
DefaultDependencies=no
ConditionPathExists=!${SWAP_FILE}
After=systemd-remount-fs.service
Before=swapfile.swap

[Service]
Type=oneshot
UMask=0077
ExecStart=/usr/bin/fallocate -l ${mib}MiB ${SWAP_FILE}.new
ExecStart=/sbin/mkswap ${SWAP_FILE}.new
ExecStart=/bin/mv ${SWAP_FILE}.new ${SWAP_FILE}
`;
}

/**
 * The host keys of the layer are shared by every image built from it: removed, and made at the first
 * start of sshd (Debian makes them only when the package is installed). `sshd -t` needs them, so the
 * list of ExecStartPre is reset and rebuilt with ssh-keygen first.
 */
async function configureSsh(tree: string, disableRootPassword: boolean): Promise<void> {
  if (!(await exists(join(tree, 'usr/sbin/sshd')))) return;
  for (const f of await readdir(join(tree, 'etc/ssh')).catch(() => [] as string[])) {
    if (f.startsWith('ssh_host_')) await rm(join(tree, 'etc/ssh', f), { force: true });
  }
  await put(tree, 'etc/systemd/system/ssh.service.d/host-keys.conf', '[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n');
  if (disableRootPassword) await put(tree, 'etc/ssh/sshd_config.d/appliance-forge.conf', 'PermitRootLogin prohibit-password\n');
}

/** Each machine gets its own id at first boot (an empty /etc/machine-id, as Debian's cloud images ship). */
async function forgetMachine(tree: string): Promise<void> {
  await put(tree, 'etc/machine-id', '', 0o444);
  const dbus = join(tree, 'var/lib/dbus/machine-id');
  const st = await lstat(dbus).catch(() => undefined);
  if (st?.isFile()) await rm(dbus);
}
