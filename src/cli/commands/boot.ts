// `appliance-forge boot IMAGE [--format F] [--firmware bios|uefi|uefi-secure] [--timeout DURATION] [--memory MIB]
// [--network none|user] [--accel auto|kvm|tcg] [--direct-kernel [--no-fast-params]] [--cpus N] [--http PORT[/PATH]] [--login USER] [--password-env VAR]
// [--run CMD]... [--console] [--json]`: boots the image under QEMU, says whether it reached a login prompt (or
// its HTTP port answered 200), optionally logs in on the serial console and runs commands.
// Exit 0: everything asked for worked; 1: it did not (or QEMU could not run); 2: usage; 130: interrupted.
import { ACCEL_CHOICES, ACCELS, bootCheck, bootCheckPassed, DEFAULT_ACCEL, DEFAULT_BOOT_TIMEOUT_MS, DEFAULT_CPUS, DEFAULT_MEMORY_MIB, FAST_KERNEL_PARAMS, FAST_NETWORK_PARAMS, FIRMWARES, IMAGE_FORMATS, isAccel, isBootCheckError, type BootCheckResult, type Firmware, type ImageFormat } from '../../imaging/boot';
import { UsageError, type Command, type CommandModule } from '../command';
import { interruptible } from '../interruptible';
import { parseDuration } from '../duration';
import { parseCommandArgs } from '../options';

export const DEFAULT_PASSWORD_ENV = 'APPLIANCE_FORGE_BOOT_PASSWORD';

/** `text` in lines of at most 78 characters, each after the first indented to the help's description column. */
function wrap(text: string): string {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.length + 1 + word.length <= 78) lines[last] += ` ${word}`;
    else lines.push(word);
  }
  return lines.join(`\n${' '.repeat(22)}`);
}

const HELP = `usage: appliance-forge boot IMAGE [options]

Boots IMAGE under QEMU (qemu-system-x86_64, KVM or TCG; the image is never modified) and reports whether it
reached a login prompt on the serial console. With --login, logs in there and runs each --run command.
IMAGE must be self-contained: a backing file, data file, extents or parent in another file is refused
(as qemu-img info reads it). QEMU's programs run confined to the image (read only) and private folders.

options:
  --format F          ${IMAGE_FORMATS.join('|')} (default: from the extension; .img is raw); either
                      way checked against the file's header
  --firmware F        bios (SeaBIOS, default), uefi (OVMF from Debian's ovmf package, q35; a private
                      copy of its variable store, removed afterwards) or uefi-secure (OVMF with
                      Secure Boot on and Microsoft's keys enrolled)
  --timeout DURATION  for the whole check: seconds, or 90s, 10m (default ${DEFAULT_BOOT_TIMEOUT_MS / 1000})
  --memory MIB        guest memory (default ${DEFAULT_MEMORY_MIB})
  --accel A           ${wrap(ACCELS.map((a) => `${a}${a === DEFAULT_ACCEL ? ' (default)' : ''}: ${ACCEL_CHOICES[a]}`).join('; '))}
  --network none|user user: a NIC with DHCP and outbound NAT, no port forwarding (default none)
  --direct-kernel     the fast path: QEMU starts the image's own /vmlinuz and /initrd.img with its
                      grub.cfg command line (read by debugfs; of a non-raw image, a copy of its root
                      partition only, refused past 8x the file's size of data), no firmware or boot loader;
                      adds kernel words that cut TCG work (the gettys of tty1..6, drm, debugfs,
                      tracefs, FUSE's control mount, configfs, hugetlbfs and the units that only
                      keep state for the next boot masked; a key type and a self-test of the
                      kernel skipped; no PATA drivers; the kernel's info messages off the console):
                      ${FAST_KERNEL_PARAMS.join(' ')}
                      and with a NIC (--network user, --http) ${FAST_NETWORK_PARAMS.join(' ')}:
                      ifupdown's networking.service (ifup -a) masked, and the initramfs sets the
                      address QEMU's DHCP gives before systemd starts (Debian 13; unless the image
                      sets ip=)
  --no-fast-params    with --direct-kernel: the image's command line only, nothing added
  --cpus N            virtual CPUs, TCG multi-threaded above 1 (default ${DEFAULT_CPUS}; 2 take about two
                      thirds of the time on an otherwise idle 2-core host)
  --http PORT[/PATH]  readiness by probing: forward the guest's PORT to a free port on 127.0.0.1 and
                      ask for PATH (default /) until it answers 200; without --login, that ends the
                      check (implies --network user)
  --login USER        log in as USER; the password is read from the environment variable below
  --password-env VAR  the variable holding the password (default ${DEFAULT_PASSWORD_ENV}); never a flag value
  --run CMD           run CMD (sh -c) after the login and report its exit code; repeatable
  --console           copy the serial console to stderr (the password masked)
  --json              print the result as one JSON document

exit status: 0 login reached or 200 answered (and the login and every command succeeded), 1 not, 2 usage error,
             130 interrupted (SIGINT, SIGTERM)
`;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function human(r: BootCheckResult, asked: { login?: string | undefined; commands: readonly string[]; http?: unknown }, ok: boolean): string {
  const lines = [`image   ${r.image} (${r.format}, ${r.firmware}${r.path === 'direct-kernel' ? ', direct kernel' : ''})`];
  lines.push(`accel   ${r.accel.used}${r.accel.reason ? ` (${r.accel.reason})` : ''}`);
  if (r.commandLine !== undefined) lines.push(`kernel  ${r.commandLine}`);
  if (r.http) lines.push(r.http.status === 200 ? `http    200 after ${seconds(r.http.readyMs ?? 0)}` : `http    no 200${r.http.status ? ` (last status ${r.http.status})` : ''}`);
  if (asked.login !== undefined || !asked.http) lines.push(r.reachedLogin ? `boot    reached the login prompt after ${seconds(r.loginPromptMs ?? 0)}` : 'boot    did not reach a login prompt');
  if (asked.login !== undefined && r.reachedLogin) lines.push(r.loggedIn ? `login   logged in as ${asked.login}` : `login   failed for ${asked.login}`);
  for (const c of r.results ?? []) lines.push(`run     exit ${c.exitCode}  ${c.command}${c.output ? `\n${c.output.replace(/^/gm, '        | ')}` : ''}`);
  if (r.reason) lines.push(`reason  ${r.reason}`);
  lines.push(`result  ${ok ? 'ok' : 'FAILED'} in ${seconds(r.elapsedMs)}`);
  return `${lines.join('\n')}\n`;
}

const OPTIONS = {
  format: { type: 'string' },
  firmware: { type: 'string', default: 'bios' },
  timeout: { type: 'string' },
  memory: { type: 'string' },
  network: { type: 'string' },
  accel: { type: 'string', default: DEFAULT_ACCEL },
  'direct-kernel': { type: 'boolean', default: false },
  'no-fast-params': { type: 'boolean', default: false },
  cpus: { type: 'string' },
  http: { type: 'string' },
  login: { type: 'string' },
  'password-env': { type: 'string', default: DEFAULT_PASSWORD_ENV },
  run: { type: 'string', multiple: true, default: [] as string[] },
  console: { type: 'boolean', default: false },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const run: Command = async (args) => {
  const { values, positionals } = parseCommandArgs(args, OPTIONS, { usage: HELP, positionals: true, warn: (m) => process.stderr.write(`appliance-forge boot: warning: ${m}\n`) });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const [image, ...extra] = positionals;
  if (!image || extra.length > 0) throw new UsageError(`one IMAGE expected\n${HELP}`);
  const format = values.format;
  if (format !== undefined && !(IMAGE_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${IMAGE_FORMATS.join(', ')}`);
  if (!(FIRMWARES as readonly string[]).includes(values.firmware)) throw new UsageError(`--firmware must be one of ${FIRMWARES.join(', ')}`);
  const accel = values.accel;
  if (!isAccel(accel)) throw new UsageError(`--accel must be one of ${ACCELS.join(', ')}`);
  const timeoutMs = values.timeout === undefined ? undefined : parseDuration(values.timeout, '--timeout');
  if (values.memory !== undefined && !/^\d{3,5}$/.test(values.memory)) throw new UsageError('--memory must be a number of MiB (128..65536)');
  if (values.network !== undefined && values.network !== 'none' && values.network !== 'user') throw new UsageError('--network must be none or user');
  if (values.cpus !== undefined && !/^(?:[1-9]|1[0-6])$/.test(values.cpus)) throw new UsageError('--cpus must be a number from 1 to 16');
  const probe = values.http === undefined ? undefined : /^(\d{1,5})(\/[\x21-\x7e]*)?$/.exec(values.http);
  if (values.http !== undefined && (!probe || Number(probe[1]) < 1 || Number(probe[1]) > 65535)) throw new UsageError('--http must be PORT or PORT/PATH (e.g. 80, 80/healthz)');
  if (values['no-fast-params'] && !values['direct-kernel']) throw new UsageError('--no-fast-params needs --direct-kernel (the firmware path adds nothing to the command line)');
  if (probe && values.network === 'none') throw new UsageError('--http needs --network user');
  const http = probe ? { port: Number(probe[1]), path: probe[2] } : undefined;
  const commands = values.run;
  let login: { user: string; password: string } | undefined;
  if (values.login !== undefined) {
    const password = process.env[values['password-env']];
    if (!password) throw new UsageError(`--login needs the password in the environment variable ${values['password-env']} (set it, or name another with --password-env)`);
    login = { user: values.login, password };
  } else if (commands.length > 0) {
    throw new UsageError('--run needs --login');
  }

  const network: 'none' | 'user' = values.network === 'none' || values.network === 'user' ? values.network : http ? 'user' : 'none';
  // A bad image (missing, compressed, not a disk, not self-contained) is a usage error.
  return interruptible('boot', ', QEMU stopped', (e) => (isBootCheckError(e, 'input') ? e.message : undefined), async (signal) => {
    const r = await bootCheck({
      image,
      format: format as ImageFormat | undefined,
      firmware: values.firmware as Firmware,
      accel,
      // 'auto' that found KVM unusable: one line saying why, before the (slower) boot starts.
      onAccel: (a) => {
        if (a.reason !== undefined) process.stderr.write(`appliance-forge boot: ${a.reason}; using TCG\n`);
      },
      timeoutMs,
      memoryMiB: values.memory === undefined ? undefined : Number(values.memory),
      network,
      directKernel: values['direct-kernel'],
      fastParams: !values['no-fast-params'],
      cpus: values.cpus === undefined ? undefined : Number(values.cpus),
      http,
      login,
      commands,
      signal,
      onLine: values.console ? (line: string) => process.stderr.write(`console | ${line}\n`) : undefined,
    });
    const ok = bootCheckPassed(r, { login, commands, http });
    process.stdout.write(values.json ? `${JSON.stringify({ ok, ...r })}\n` : human(r, { login: login?.user, commands, http }, ok));
    return ok ? 0 : 1;
  });
};

export const boot: CommandModule = { run, help: HELP, options: OPTIONS };
