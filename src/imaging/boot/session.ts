// The conversation over the serial console: wait for `login:`, log in, make the shell's prompt a
// marker no guest output can contain, run each command with its output and exit code between
// nonce markers. The markers are typed split by quotes ('AF''…'), so the echo of what we type never
// matches them; commands travel base64-encoded, so no quote, ^C or ^U in them reaches the tty.
import { randomBytes } from 'node:crypto';
import type { SerialConsole } from './console';

export interface CommandResult {
  readonly command: string;
  readonly exitCode: number;
  /** stdout and stderr together, trailing newlines removed (as `$(…)` does); at most MAX_OUTPUT_BYTES. */
  readonly output: string;
}

/** What the session learned; filled in as it goes, so a timeout keeps what was reached. */
export interface SessionState {
  reachedLogin: boolean;
  loggedIn?: boolean;
  results?: CommandResult[];
  /** Why the session stopped short of what was asked (set by the session or by its caller). */
  reason?: string;
}

export interface SessionOptions {
  readonly login?: { readonly user: string; readonly password: string } | undefined;
  readonly commands: readonly string[];
}

/** Per command, the output read back is cut here (the serial line carries about 11 KB/s). */
export const MAX_OUTPUT_BYTES = 64 * 1024;
/** A command line travels as one tty line (canonical mode takes 4095 bytes); base64 grows it by 4/3. */
export const MAX_COMMAND_BYTES = 2048;

const LOGIN_PROMPT = /(^|\n)[^\n]*\blogin: *$/;
const PASSWORD_PROMPT = /Password: *$/;
const LOGIN_INCORRECT = /Login incorrect/;
/** A shell prompt at the very end of what was printed (root's `# ` or a user's `$ `). */
const SHELL_PROMPT = /[#$>] *$/;
/** No Password: prompt this long after the user name: type it again (getty may have been restarting). Long,
 * because typing it again while a slow login(1) is about to ask would be read as the password. */
const PASSWORD_PROMPT_WAIT_MS = 60_000;
const LOGIN_ATTEMPTS = 3;

export interface Tty {
  readonly console: SerialConsole;
  write(text: string): void;
}

/** Like waitFor, but gives up after `ms` (undefined) without ending the check; `parent` still ends it. */
async function waitStep(tty: Tty, test: (t: string) => boolean, parent: AbortSignal, ms: number): Promise<string | undefined> {
  const step = AbortSignal.timeout(ms);
  try {
    return await tty.console.waitFor(test, AbortSignal.any([parent, step]));
  } catch (e) {
    if (step.aborted && !parent.aborted) return undefined;
    throw e;
  }
}

/** Runs the session; `state` is updated at each step. Rejects with `signal.reason` when the signal aborts. */
export async function runSession(tty: Tty, o: SessionOptions, state: SessionState, signal: AbortSignal, onPrompt?: () => void): Promise<void> {
  const { console: con } = tty;
  await con.waitFor((t) => LOGIN_PROMPT.test(t), signal);
  state.reachedLogin = true;
  onPrompt?.();
  if (!o.login) return;

  state.loggedIn = false;
  let asked = false;
  for (let attempt = 0; attempt < LOGIN_ATTEMPTS && !asked; attempt++) {
    con.mark();
    tty.write(`${attempt > 0 ? '\r' : ''}${o.login.user}\r`);
    asked = (await waitStep(tty, (t) => PASSWORD_PROMPT.test(t), signal, PASSWORD_PROMPT_WAIT_MS)) !== undefined;
  }
  if (!asked) {
    state.reason = `no Password: prompt after typing the user name ${LOGIN_ATTEMPTS} times`;
    return;
  }
  con.mark();
  tty.write(`${o.login.password}\r`);
  const after = await con.waitFor((t) => LOGIN_INCORRECT.test(t) || LOGIN_PROMPT.test(t) || SHELL_PROMPT.test(t), signal);
  if (!SHELL_PROMPT.test(after) || LOGIN_INCORRECT.test(after)) {
    state.reason = `login refused for ${o.login.user}: ${LOGIN_INCORRECT.test(after) ? 'Login incorrect (wrong user or password)' : 'the guest asked for the login again'}`;
    return;
  }

  // The prompt becomes `<marker># `; echo off so nothing we type comes back; no pager, no colours,
  // kernel messages off the console (root only) so they do not land in a command's output; line editing
  // off too (readline echoes what we type whatever the tty says).
  const nonce = randomBytes(6).toString('hex');
  const marker = (tag: string, quote = `'`): string => `${quote}AF${quote}${quote}${nonce}${tag}${quote}`;
  const prompt = `AF${nonce}# `;
  con.mark();
  tty.write(`stty -echo; export PS1=${marker('# ')} PAGER=cat SYSTEMD_PAGER= SYSTEMD_COLORS=0 LC_ALL=C; unset PROMPT_COMMAND; dmesg -n 1 2>/dev/null; set +o emacs +o vi 2>/dev/null\r`);
  await con.waitFor((t) => t.endsWith(prompt), signal);
  state.loggedIn = true;

  state.results = [];
  const begin = `AF${nonce}-B\n`;
  const end = new RegExp(`AF${nonce}-E:(\\d+)\\n`);
  for (const command of o.commands) {
    const b64 = Buffer.from(command, 'utf8').toString('base64');
    con.mark();
    // Output to a file first: the command's stdout is not the tty (no pager, no colours) and a flood is cut.
    tty.write(
      `o=$(mktemp); sh -c "$(printf %s '${b64}' | base64 -d)" </dev/null >"$o" 2>&1; s=$?; ` +
      `echo ${marker('-B', '"')}; head -c ${MAX_OUTPUT_BYTES} "$o"; echo; rm -f "$o"; echo ${marker('-E', '"')}:$s\r`,
    );
    const text = await con.waitFor((t) => t.includes(begin) && end.test(t.slice(t.indexOf(begin))), signal);
    const from = text.indexOf(begin) + begin.length;
    const m = end.exec(text.slice(from))!;
    const output = text.slice(from, from + m.index).replace(/\n+$/, '');
    state.results.push({ command, exitCode: Number(m[1]), output });
  }
}
