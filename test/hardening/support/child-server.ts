// The reference server as a child process (`appliance-forge serve --port 0 --data-dir DIR`, from
// `dist/`): what a kill test needs (SIGKILL at any point) and what a log test needs (every line the
// server writes, captured from its stdout and stderr).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(__dirname, '..', '..', '..');
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

export interface ChildServer {
  url: string;
  proc: ChildProcess;
  /** Everything written so far (stdout and stderr), line by line. */
  lines: string[];
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function requireDist(): void {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -p tsconfig.json)`);
}

export async function spawnServer(dataDir: string, o: { log?: boolean; extra?: string[] } = {}): Promise<ChildServer> {
  requireDist();
  // No catalog refresh: these servers are attacked, not updated (a refresh reads and downloads the mirror's index,
  // which would blur the byte and request counts; test/catalog tests the refresh).
  const args = [CLI, 'serve', '--port', '0', '--data-dir', dataDir, '--no-catalog-refresh', ...(o.log ? ['--log'] : []), ...(o.extra ?? [])];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not print its URL: ${lines.join('\n')}`)), 30_000);
    const take = (chunk: Buffer) => {
      const all = partial + chunk.toString('utf8');
      const parts = all.split('\n');
      partial = parts.pop() ?? '';
      for (const l of parts) {
        lines.push(l);
        if (/^http:\/\/127\.0\.0\.1:\d+\//.test(l)) {
          clearTimeout(timer);
          resolve(l.trim());
        }
      }
    };
    proc.stdout!.on('data', take);
    proc.stderr!.on('data', take);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before printing its URL: ${lines.join('\n')}`));
    });
  });
  return {
    url,
    proc,
    lines,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}
