// The contract between the three stages of a real image build (docs/contracts.md "Imaging"):
//   1. the OS layer (`os/`): a Debian root tree built by mmdebstrap from a mirror, cached by OsLayerSpec;
//   2. the system settings: what the install profile asks for, already checked and normalised by the API
//      (passwords only as crypt(3) hashes), applied to a private copy of that tree;
//   3. the disk: the tree made into a bootable disk (MBR, BIOS GRUB, ext4 labelled `root`).
import type { DEFAULT_PLATFORM } from '../model/platforms';

/** Debian mirror the OS layer is installed from: the archive and its security archive. */
export interface MirrorConfig {
  /** e.g. `http://deb.debian.org/debian` */
  readonly archive: string;
  /** e.g. `http://deb.debian.org/debian-security`; absent: no security suite. */
  readonly security?: string | undefined;
}

/** Kernel flavour: `cloud` (linux-image-cloud-ARCH) for cloud formats, `generic` (linux-image-ARCH) otherwise (model/platforms.ts). */
export type KernelFlavour = 'cloud' | 'generic';

/** A package asked for by name; `version` (full Debian version, `[epoch:]upstream[-revision]`) only when pinned. */
export interface PackageRequest {
  readonly name: string;
  readonly arch?: string;
  readonly version?: string;
}

/** Everything that determines an OS layer: equal specs give the same tree (the cache key is derived from it). */
export interface OsLayerSpec {
  /** Debian codename, e.g. `bookworm`. */
  readonly suite: string;
  /** Debian's architecture name (model/platforms.ts): the images are x86-64 ones today. */
  readonly arch: typeof DEFAULT_PLATFORM.debianArch;
  /** Base profile: `Minimal` (Priority required + a bootable system) or `Standard` (+ important and standard). */
  readonly profile: 'Minimal' | 'Standard';
  /** Packages beyond the profile (the template's additions, plus what the settings need, e.g. openssh-server). */
  readonly packages: readonly PackageRequest[];
  readonly kernel: KernelFlavour;
  /** cloud-init for `OpenStack *` formats: key pair, hostname and network from the cloud's metadata. */
  readonly cloudInit: boolean;
  readonly mirror: MirrorConfig;
  /**
   * Layers of this partition only (`serve --layers-per-owner`: the owner's login), so that how fast a
   * build finds its layer tells no one what another owner built. Part of the key when set.
   */
  readonly partition?: string | undefined;
}

/** A package as installed in a tree (`dpkg-query`), recorded in the manifest. */
export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  readonly arch: string;
}

export interface SshKey {
  readonly name?: string;
  /** One OpenSSH public key line. */
  readonly publicKey: string;
}

export interface SystemUser {
  readonly name: string;
  readonly fullName?: string;
  readonly homeDir?: string;
  readonly shell?: string;
  readonly primaryGroup?: string;
  readonly secondaryGroups: readonly string[];
  /** crypt(3) hash (`$6$…` or `$y$…`); absent: the account has no password (locked for password login). */
  readonly passwordHash?: string;
  readonly sshKeys: readonly SshKey[];
  /** Fixed uid (`useradd --uid`); absent: the next free one. */
  readonly uid?: number;
  /** A system account (`useradd --system`: uid below 1000, no aging). */
  readonly system?: boolean;
}

export interface SystemGroup {
  readonly name: string;
  readonly gid?: number;
  readonly system: boolean;
}

/** The install profile as the disk stage applies it (every value already validated by the API). */
export interface SystemSettings {
  /** Static hostname; cloud-init may replace it from the cloud's metadata. */
  readonly hostname: string;
  /** Disk size in MiB (the whole disk, partition table included). */
  readonly diskMiB: number;
  /** Swap file size in MiB; 0: no swap. */
  readonly swapMiB: number;
  /** IANA zone name, e.g. `Europe/Paris`; absent: Etc/UTC. */
  readonly timezone?: string;
  /** XKB layout/variant for /etc/default/keyboard (console-setup); absent: leave Debian's default (us). */
  readonly keyboard?: { readonly layout: string; readonly variant?: string };
  /** Extra kernel command-line words (after root=, console=). */
  readonly kernelParams: readonly string[];
  readonly rootUser: {
    readonly passwordHash?: string;
    /** `PermitRootLogin prohibit-password`-style: no password login for root (console and ssh). */
    readonly disablePasswordLogin: boolean;
    readonly sshKeys: readonly SshKey[];
  };
  readonly users: readonly SystemUser[];
  readonly groups: readonly SystemGroup[];
  /** Text for /etc/motd (shown after login). */
  readonly welcomeMessage?: string;
}
