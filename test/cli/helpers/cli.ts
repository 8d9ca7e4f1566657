// Runs the real command line as a child process. The CLI is bundled with esbuild from the sources
// (the native SQLite module stays external, resolved from node_modules as in an installed package).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';

const root = path.resolve(__dirname, '../../..');
let bundled: string | undefined;

/** The CLI: `src/cli/cli.ts` once it dispatches plan/apply, else a stand-in doing the same dispatch. */
export function cliBundle(): string {
  if (bundled) return bundled;
  const dir = mkdtempSync(path.join(root, 'node_modules', '.af-cli-'));
  const main = path.join(root, 'src/cli/cli.ts');
  let entry = main;
  if (!existsSync(main) || !readFileSync(main, 'utf8').includes('commands/apply')) {
    entry = path.join(dir, 'entry.ts');
    writeFileSync(entry, [
      `import { runDeclarationCommand } from ${JSON.stringify(path.join(root, 'src/cli/declaration-command'))};`,
      `const [mode, ...rest] = process.argv.slice(2);`,
      `runDeclarationCommand(mode as 'plan' | 'apply', rest).then((c) => { process.exitCode = c; }, (e) => { process.stderr.write(String(e) + '\\n'); process.exitCode = 2; });`,
    ].join('\n'));
  }
  const out = path.join(dir, 'cli.js');
  buildSync({ entryPoints: [entry], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: out, external: ['better-sqlite3'], logLevel: 'error' });
  // An ordinary user's build runs its disk stage in this child, found beside the bundle (as the Action ships it).
  buildSync({
    entryPoints: [path.join(root, 'src/imaging/disk/in-namespace-main.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs',
    outfile: path.join(dir, 'in-namespace-main.js'), external: ['better-sqlite3'], logLevel: 'error',
  });
  return (bundled = out);
}

/** The APPLIANCE_FORGE_* variables that connect the CLI to `url` as `user` (its API key pair). */
export function connectionEnv(url: string, user: { login: string; publicKey: string; secretKey: string }): Record<string, string> {
  return { APPLIANCE_FORGE_URL: url, APPLIANCE_FORGE_USER: user.login, APPLIANCE_FORGE_API_KEY: user.publicKey, APPLIANCE_FORGE_SECRET_KEY: user.secretKey };
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  o: { cwd?: string; env?: Record<string, string>; onStderr?: (text: string, child: ReturnType<typeof spawn>) => void; killAfterMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', NODE_PATH: path.join(root, 'node_modules'), ...o.env };
    const child = spawn(process.execPath, [cliBundle(), ...args], { cwd: o.cwd ?? tmpdir(), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      o.onStderr?.(stderr, child);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), o.killAfterMs ?? 900_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Runs the CLI with a terminal on stdin, stdout and stderr (util-linux `script` gives it a pty), typing
 * `input`: what a person at a terminal sees, the echo of the answer included, in `stdout`.
 */
export function runCliOnTerminal(args: string[], o: { cwd: string; env?: Record<string, string>; input: string }): Promise<CliRun> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, cliBundle(), ...args].map(quote).join(' ');
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', NODE_PATH: path.join(root, 'node_modules'), TERM: 'dumb', ...o.env };
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: o.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(o.input);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
