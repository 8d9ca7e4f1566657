// Whether this host can build an image of another architecture. mmdebstrap runs the image's own
// package scripts (dpkg, postinst, update-initramfs) in its tree, so an arm64 tree on an x86-64 host
// needs qemu-user through binfmt_misc, and arch-test (mmdebstrap refuses a foreign architecture
// without it). The binfmt entry must carry the F flag: the build runs in a user namespace whose root
// is the tree, where the entry's interpreter path is not there to open; F opens it at registration.
import { readFileSync } from 'node:fs';
import { missingTools, packagesOf } from './tools';

/** Where binfmt_misc is mounted. */
export const BINFMT_DIR = '/proc/sys/fs/binfmt_misc';

/** Node's name of the architecture it runs on → Debian's. */
const NODE_TO_DEBIAN: Readonly<Record<string, string>> = {
  x64: 'amd64',
  arm64: 'arm64',
  ia32: 'i386',
  arm: 'armhf',
  ppc64: 'ppc64el',
  s390x: 's390x',
  riscv64: 'riscv64',
  loong64: 'loong64',
  mips64el: 'mips64el',
};

/** Debian's architecture → the binfmt_misc entry Debian's qemu-user-static registers for it. */
const BINFMT_ENTRY: Readonly<Record<string, string>> = {
  amd64: 'qemu-x86_64',
  arm64: 'qemu-aarch64',
  armhf: 'qemu-arm',
  armel: 'qemu-arm',
  i386: 'qemu-i386',
  ppc64el: 'qemu-ppc64le',
  s390x: 'qemu-s390x',
  riscv64: 'qemu-riscv64',
  loong64: 'qemu-loongarch64',
  mips64el: 'qemu-mips64el',
};

/** The host tools of a foreign-architecture build (data/host-tools.json, `build`). */
const FOREIGN_TOOLS = ['qemu-aarch64-static', 'update-binfmts', 'arch-test'] as const;

/** This host's architecture by Debian's name (`amd64`), or Node's own name where Debian has none. */
export function nativeDebianArch(): string {
  return NODE_TO_DEBIAN[process.arch] ?? process.arch;
}

export interface ForeignArchOptions {
  /** binfmt_misc's folder (default BINFMT_DIR): a test's stand-in. */
  readonly binfmtDir?: string | undefined;
}

function readOr(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Why this host cannot run programs of Debian architecture `arch` (`arm64`) in a build's user
 * namespace; undefined when it can (its own architecture always can). One message: what is missing,
 * and the packages and commands that fix it.
 */
export function foreignArchProblem(arch: string, o: ForeignArchOptions = {}): string | undefined {
  const native = nativeDebianArch();
  if (arch === native) return undefined;
  const entry = BINFMT_ENTRY[arch];
  const head = `${arch} images cannot be built on this ${native} host`;
  if (entry === undefined) return `${head}: no emulator is known for ${arch} (known: ${Object.keys(BINFMT_ENTRY).sort().join(', ')})`;
  const dir = o.binfmtDir ?? BINFMT_DIR;
  const missing: string[] = [];
  const text = readOr(`${dir}/${entry}`);
  if (readOr(`${dir}/status`) === undefined) missing.push(`binfmt_misc is not mounted at ${dir}`);
  else if (text === undefined) missing.push(`binfmt_misc has no ${entry} entry`);
  else if (!text.split('\n').includes('enabled')) missing.push(`binfmt_misc's ${entry} entry is disabled`);
  else if (!/^flags: *[A-Z]*F/m.test(text)) {
    missing.push(`binfmt_misc's ${entry} entry lacks the F flag (a build's user namespace cannot open its interpreter): remove it (echo -1 > ${dir}/${entry}) and let Debian's qemu-user-static register it`);
  }
  const tools = missingTools(['arch-test']);
  if (tools.length > 0) missing.push('arch-test is not installed');
  if (missing.length === 0) return undefined;
  const pkgs = packagesOf(FOREIGN_TOOLS).join(' ');
  // prereqs.sh readies the one foreign architecture images are built for (arm64).
  const all = entry === 'qemu-aarch64' ? ' (bash scripts/prereqs.sh build does all three)' : '';
  return `${head}: ${missing.join('; ')}. As root: apt-get install ${pkgs}, mount -t binfmt_misc binfmt_misc ${BINFMT_DIR} and update-binfmts --enable ${entry}${all}`;
}
