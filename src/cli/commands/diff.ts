// `appliance-forge diff IMAGE_A IMAGE_B [--max N] [--json]`: the first partition-table, superblock and
// file differences of two disk images (imaging/diff.ts), e.g. two builds that should be identical.
// Exit 0: identical; 1: they differ; 2: usage (a missing or unsupported image); 130: interrupted.
import { parseArgs } from 'node:util';
import { diffImages, diffText } from '../../imaging/diff';
import { isImagingError } from '../../imaging/errors';
import { UsageError, type Command, type CommandModule } from '../command';
import { interruptible } from '../interruptible';

const HELP = `usage: appliance-forge diff IMAGE_A IMAGE_B [options]

Compares two disk images (qcow2, raw, vmdk, vhd, vdi; self-contained, as boot takes them) and names
the first differences: partition table and ids, the root filesystem's superblock (dumpe2fs -h),
then its files by path (type, mode, owner, size, sha256 or link target, times, extended attributes).
The images are read in the build sandbox, never mounted or booted; qemu-img runs confined to each image,
and copies a non-raw image's disk only if it holds at most 8x the file's size of data (at least 64 MiB).

options:
  --max N    differences listed (default 20); the count of the others follows
  --json     print the result as one JSON document

exit status: 0 identical, 1 different, 2 usage error (or an image that cannot be read), 130 interrupted
`;

const OPTIONS = {
  max: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const run: Command = async (args) => {
  const { values, positionals } = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [a, b, ...extra] = positionals;
  if (!a || !b || extra.length > 0) throw new UsageError(`two images expected\n${HELP}`);
  if (values.max !== undefined && !/^[1-9]\d{0,4}$/.test(values.max)) throw new UsageError('--max must be a whole number from 1 to 99999');
  return interruptible('diff', '', (e) => (isImagingError(e, 'input') ? e.message : undefined), async (signal) => {
    const d = await diffImages(a, b, { max: values.max === undefined ? undefined : Number(values.max), signal });
    process.stdout.write(values.json ? `${JSON.stringify(d)}\n` : diffText(d));
    return d.identical ? 0 : 1;
  });
};

export const diff: CommandModule = { run, help: HELP, options: OPTIONS };
