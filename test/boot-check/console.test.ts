// The serial console reader without a guest: bytes split anywhere (inside an escape sequence, inside a
// UTF-8 character), escapes and control characters removed, the password masked everywhere it leaves.
import { describe, expect, it } from 'vitest';
import { SerialConsole } from '../../src/imaging/boot/console';
import { maskSecrets } from '../../src/model/redact';

const mask = (s: string): string => maskSecrets(s, ['s3cret']);

function feedBytewise(con: SerialConsole, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i++) con.feed(bytes.subarray(i, i + 1));
}

describe('SerialConsole', () => {
  it('strips ANSI escapes and CR split across chunks, keeps UTF-8, emits masked lines', () => {
    const lines: string[] = [];
    const con = new SerialConsole(mask, (l) => lines.push(l));
    feedBytewise(con, '[\x1b[0;32m  OK  \x1b[0m] Started nginx – “web”\r\n\x1b[?2004hpass s3cret here\r\nhost login: ');
    expect(lines).toEqual(['[  OK  ] Started nginx – “web”', 'pass *** here']);
    expect(con.text()).toBe('[  OK  ] Started nginx – “web”\npass *** here\nhost login: ');
    expect(con.consoleTail()).not.toContain('s3cret');
  });

  it('mark() hides what came before, including the start of the current line', async () => {
    const con = new SerialConsole(mask);
    con.feed(Buffer.from('boot\nhost login: '));
    con.mark();
    expect(con.text()).toBe('');
    const waiting = con.waitFor((t) => /Password: $/.test(t), new AbortController().signal);
    con.feed(Buffer.from('root\r\nPassword: '));
    await expect(waiting).resolves.toBe('root\nPassword: ');
    expect(con.consoleTail()).toContain('host login: root\nPassword: ');
  });

  it('a wait rejects with the abort reason, and every wait rejects once the console is closed', async () => {
    const con = new SerialConsole(mask);
    const ac = new AbortController();
    const w = con.waitFor(() => false, ac.signal);
    ac.abort(new Error('timed out'));
    await expect(w).rejects.toThrow('timed out');
    const pending = con.waitFor(() => false, new AbortController().signal);
    con.close(new Error('qemu exited'));
    await expect(pending).rejects.toThrow('qemu exited');
    await expect(con.waitFor(() => true, new AbortController().signal)).rejects.toThrow('qemu exited');
  });

  it('stays bounded when the guest prints a line without end', () => {
    const con = new SerialConsole(mask);
    for (let i = 0; i < 64; i++) con.feed(Buffer.alloc(64 * 1024, 0x61));
    expect(con.text().length).toBeLessThanOrEqual(64 * 1024);
    expect(con.consoleTail().length).toBeLessThanOrEqual(8 * 1024);
  });
});
