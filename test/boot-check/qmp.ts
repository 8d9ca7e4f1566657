// What QEMU itself opened for a command line, asked of QEMU: the machine is created but never run
// (-S), QMP's query-named-block-nodes lists every block node with its driver and file, and /proc lists
// the files the QEMU process holds open. About a second per call; no guest boots.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

export interface BlockNode {
  readonly drv: string;
  readonly file: string;
  readonly backing_file_depth: number;
}

export interface Opened {
  readonly nodes: readonly BlockNode[];
  /** Targets of /proc/PID/fd/* */
  readonly openFiles: readonly string[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Starts qemu-system-x86_64 with `args` plus -S and a QMP socket, reads what it opened, kills it. Rejects with QEMU's stderr if it does not start. */
export async function openedByQemu(args: readonly string[]): Promise<Opened> {
  const dir = mkdtempSync(path.join(tmpdir(), 'af-qmp-'));
  const sock = path.join(dir, 'qmp.sock');
  const qemu = spawn('qemu-system-x86_64', [...args, '-S', '-qmp', `unix:${sock},server=on,wait=off`], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  qemu.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<void>((r) => qemu.on('close', () => r()));
  try {
    for (let i = 0; i < 200 && !existsSync(sock); i++) {
      if (qemu.exitCode !== null) break;
      await sleep(50);
    }
    if (!existsSync(sock)) throw new Error(`qemu did not start: ${stderr.trim()}`);
    const conn = createConnection(sock);
    const lines = createInterface({ input: conn })[Symbol.asyncIterator]();
    const reply = async (): Promise<{ return?: unknown; error?: { desc: string } }> => {
      for (;;) {
        const next = await lines.next();
        if (next.done) throw new Error(`QMP closed: ${stderr.trim()}`);
        const msg = JSON.parse(next.value) as { return?: unknown; error?: { desc: string }; QMP?: unknown; event?: unknown };
        if ('return' in msg || 'error' in msg) return msg;
      }
    };
    conn.write('{"execute":"qmp_capabilities"}\n');
    await reply();
    conn.write('{"execute":"query-named-block-nodes","arguments":{"flat":true}}\n');
    const nodes = await reply();
    if (nodes.error) throw new Error(nodes.error.desc);
    const fdDir = `/proc/${qemu.pid}/fd`;
    const openFiles = readdirSync(fdDir).map((fd) => {
      try {
        return readlinkSync(path.join(fdDir, fd));
      } catch {
        return '';
      }
    });
    conn.destroy();
    return { nodes: nodes.return as BlockNode[], openFiles };
  } finally {
    qemu.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}
