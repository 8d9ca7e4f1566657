// Stage 2 of a real image build: the install profile and the appliance's files applied to a private
// copy of the OS layer tree (docs/contracts.md "Imaging"). Every file is written through the tree's
// own paths (see ../tree.ts); users and groups come from the image's own tools (accounts.ts).
import { lstat, utimes } from 'node:fs/promises';
import { AbortedError } from '../../errors';
import type { BuildHost } from '../build-host';
import { applyAccounts } from './accounts';
import { ImagingError } from '../errors';
import { reproducibleEnv, type Reproducible } from '../reproducible';
import { placeFiles, type ImageFile } from './staging';
import type { SystemSettings } from '../stages';
import { TreeWriter } from './tree-writer';

export interface ApplySystemOptions {
  readonly settings: SystemSettings;
  readonly files: readonly ImageFile[];
  /** Content of MANIFEST_PATH in the image. */
  readonly manifest: string;
  /** cloud-init configures the network (and the ssh host keys) itself: no ifupdown stanza is written. */
  readonly cloudInit: boolean;
  readonly signal?: AbortSignal | undefined;
  /** Who the tree's tools run as, and so how its owners are stored on the host. */
  readonly host: BuildHost;
  /** The shadow tools date /etc/shadow's changes at its epoch. */
  readonly reproducible?: Reproducible | undefined;
}

/** The swap file the first boot creates (mke2fs -d would store zeros as holes, which swapon refuses). */
export const SWAP_FILE = '/swapfile';
const SWAP_UNIT = 'appliance-forge-swapfile.service';

const HOSTNAME = /^(?=.{1,63}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?$/;
const ZONE = /^[A-Za-z0-9_+-]+(?:\/[A-Za-z0-9_+-]+)*$/;
const XKB = /^[A-Za-z0-9_()+-]*$/;

export async function applySystem(tree: string, o: ApplySystemOptions): Promise<void> {
  await applySettings(tree, o);
  await placeFiles(new TreeWriter(tree, o.host), o.files, o.manifest, o.signal);
}

/** Everything of applySystem but the manifest and the software files (the part an image's base disk holds). */
export async function applySettings(tree: string, o: Omit<ApplySystemOptions, 'files' | 'manifest'>): Promise<void> {
  const s = o.settings;
  const w = new TreeWriter(tree, o.host);
  const put = (path: string, text: string, mode?: number): Promise<string> => w.writeText(path, text, mode);
  const step = (): void => {
    if (o.signal?.aborted) throw new AbortedError('image build aborted');
  };
  if (!HOSTNAME.test(s.hostname)) throw new ImagingError('input', `refused hostname ${JSON.stringify(s.hostname)}: expected one DNS label`);
  await put('etc/hostname', `${s.hostname}\n`);
  await put('etc/hosts', `127.0.0.1\tlocalhost\n127.0.1.1\t${s.hostname}\n::1\tlocalhost ip6-localhost ip6-loopback\nff02::1\tip6-allnodes\nff02::2\tip6-allrouters\n`);

  let fstab = 'LABEL=root\t/\text4\terrors=remount-ro\t0\t1\n';
  if (s.swapMiB > 0) {
    if (!Number.isSafeInteger(s.swapMiB)) throw new ImagingError('input', `refused swap size ${s.swapMiB} MiB: expected a whole number`);
    fstab += `${SWAP_FILE}\tnone\tswap\tsw\t0\t0\n`;
    await put(`etc/systemd/system/${SWAP_UNIT}`, swapUnit(s.swapMiB));
    // Pulled in by the swap unit systemd generates from fstab (a .requires directory applies to generated units).
    await w.mkdir('etc/systemd/system/swapfile.swap.requires');
    await w.symlink(`../${SWAP_UNIT}`, `etc/systemd/system/swapfile.swap.requires/${SWAP_UNIT}`);
  }
  await put('etc/fstab', fstab);

  const zone = s.timezone ?? 'Etc/UTC';
  if (!ZONE.test(zone) || !(await w.exists(`usr/share/zoneinfo/${zone}`))) {
    throw new ImagingError('input', `unknown time zone ${JSON.stringify(zone)}: no /usr/share/zoneinfo/${zone} in the image`);
  }
  await w.symlink(`/usr/share/zoneinfo/${zone}`, 'etc/localtime');
  await put('etc/timezone', `${zone}\n`);

  if (s.keyboard) {
    const { layout, variant = '' } = s.keyboard;
    if (!XKB.test(layout) || layout === '' || !XKB.test(variant)) throw new ImagingError('input', `refused keyboard ${JSON.stringify(s.keyboard)}`);
    await put('etc/default/keyboard', `XKBMODEL="pc105"\nXKBLAYOUT="${layout}"\nXKBVARIANT="${variant}"\nXKBOPTIONS=""\nBACKSPACE="guess"\n`);
  }
  if (s.welcomeMessage !== undefined) await put('etc/motd', s.welcomeMessage.endsWith('\n') ? s.welcomeMessage : `${s.welcomeMessage}\n`);
  if (!o.cloudInit) await put('etc/network/interfaces.d/eth0', 'allow-hotplug eth0\niface eth0 inet dhcp\n');
  else await put(CLOUD_CONFIG, cloudConfig());
  step();

  await applyAccounts(w, s, o.signal, reproducibleEnv(o.reproducible));
  step();
  await configureSsh(w, s.rootUser.disablePasswordLogin);
  await forgetMachine(w);
  step();
  await markUpdated(w);
}

/** The stamps systemd-update-done leaves, relative to the tree. */
export const UPDATE_STAMPS = ['etc/.updated', 'var/.updated'] as const;

/**
 * /etc and /var are as current as /usr: dpkg already ran what the first boot's `ConditionNeedsUpdate=`
 * units would (ldconfig, sysusers, the journal catalog, hwdb), so the stamps systemd-update-done writes
 * after them are written here, dated like /usr as it dates them. Last, so nothing changes /usr after.
 */
async function markUpdated(w: TreeWriter): Promise<void> {
  const usr = await w.locate('usr', false);
  const st = usr === undefined ? undefined : await lstat(usr).catch(() => undefined);
  if (!st?.isDirectory()) return;
  for (const stamp of UPDATE_STAMPS) {
    const host = await w.writeText(stamp, '# Written at image build time, as systemd-update-done does: /etc and /var are as new as /usr.\n');
    await utimes(host, st.atime, st.mtime);
  }
}

/** cloud-init's settings for the images that carry it (OpenStack formats). */
export const CLOUD_CONFIG = 'etc/cloud/cloud.cfg.d/90_appliance-forge.cfg';

/**
 * The OpenStack datasources first (a config drive needs no network), NoCloud for a seed disk, else
 * none: no probing of other clouds' metadata services. The root partition (the disk's last) and its
 * filesystem grow to the disk at the first boot; ssh host keys are made there, never shipped.
 */
export function cloudConfig(): string {
  return `datasource_list: [ConfigDrive, OpenStack, NoCloud, None]
growpart:
  mode: auto
  devices: ['/']
  ignore_growroot_disabled: false
resize_rootfs: true
ssh_deletekeys: true
ssh_genkeytypes: [rsa, ecdsa, ed25519]
`;
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
async function configureSsh(w: TreeWriter, disableRootPassword: boolean): Promise<void> {
  if (!(await w.exists('usr/sbin/sshd'))) return;
  for (const f of await w.list('etc/ssh')) {
    if (f.startsWith('ssh_host_')) await w.remove(`etc/ssh/${f}`);
  }
  await w.writeText('etc/systemd/system/ssh.service.d/host-keys.conf', '[Service]\nExecStartPre=\nExecStartPre=/usr/bin/ssh-keygen -A\nExecStartPre=/usr/sbin/sshd -t\n');
  if (disableRootPassword) await w.writeText('etc/ssh/sshd_config.d/appliance-forge.conf', 'PermitRootLogin prohibit-password\n');
}

/**
 * Each machine gets its own id at first boot (an empty /etc/machine-id, as Debian's cloud images ship);
 * the build host's resolver (mmdebstrap copies it) goes too: DHCP writes the machine's own.
 */
async function forgetMachine(w: TreeWriter): Promise<void> {
  await w.writeText('etc/machine-id', '', 0o444);
  await w.remove('var/lib/dbus/machine-id');
  await w.remove('etc/resolv.conf');
}
