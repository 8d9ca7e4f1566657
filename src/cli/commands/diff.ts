// `appliance-forge diff IMAGE_A IMAGE_B [--files] [--max N] [--json]`: the first file differences of two
// disk images, then their partition-table and superblock differences (imaging/disk/diff.ts), e.g. two builds
// that should be identical; --files: the files only.
// Exit 0: identical; 1: they differ; 2: usage (a missing or unsupported image); 130: interrupted.
import { diffImages, diffText, isImagingError } from '../../imaging';
import { UsageError, type Command, type CommandModule } from '../command';
import { interruptible } from '../interruptible';
import { parseCommandArgs } from '../options';

const HELP = `usage: appliance-forge diff IMAGE_A IMAGE_B [options]

Compares two disk images (qcow2, raw, vmdk, vhd, vdi; self-contained, as boot takes them) and names
the first differences: the root filesystem's files by path (added, removed; type, mode, owner, size,
sha256 or link target, times, extended attributes), then under a heading of their own the metadata:
the partition table and its ids, the filesystem's superblock (dumpe2fs -h: UUID, free blocks, hash seed).
The images are read in the build sandbox, never mounted or booted; qemu-img runs confined to each image,
and copies a non-raw image's disk only if it holds at most 8x the file's size of data (at least 64 MiB).

options:
  --files    only the files' differences, none of the partition table's or superblock's
  --max N    differences listed (default 20); the count of the others follows
  --json     print the result as one JSON document (each difference has a kind: file or metadata)

exit status: 0 identical (with --files: the same files), 1 different, 2 usage error (or an image that
cannot be read), 130 interrupted
`;

const OPTIONS = {
  files: { type: 'boolean', default: false },
  max: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, { usage: HELP, positionals: true, warn: (m) => process.stderr.write(`appliance-forge diff: warning: ${m}\n`) });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [a, b, ...extra] = positionals;
  if (!a || !b || extra.length > 0) throw new UsageError(`two images expected\n${HELP}`);
  if (values.max !== undefined && !/^[1-9]\d{0,4}$/.test(values.max)) throw new UsageError('--max must be a whole number from 1 to 99999');
  return interruptible('diff', '', (e) => (isImagingError(e, 'input') ? e.message : undefined), async (signal) => {
    const d = await diffImages(a, b, { max: values.max === undefined ? undefined : Number(values.max), filesOnly: values.files, signal });
    process.stdout.write(values.json ? `${JSON.stringify(d)}\n` : diffText(d));
    return d.identical ? 0 : 1;
  });
};

export const diff: CommandModule = { run, help: HELP, options: OPTIONS };
