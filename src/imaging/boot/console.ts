// The guest's serial console as text: bytes decoded as UTF-8, ANSI escapes and other control
// characters removed, split into lines. Everything that leaves this module (lines, the tail, the
// text a step waits on) goes through `mask`, so a password never shows even if the guest echoes it.
import { StringDecoder } from 'node:string_decoder';
import { stripVTControlCharacters } from 'node:util';
import { replaceControls, TAB_AND_NEWLINE } from '../../model/text-rules';

/** Of the whole console, the last bytes kept for the result. */
const TAIL_CHARS = 8 * 1024;
/** Text a step waits on is bounded: a guest flooding the console cannot grow memory without limit. */
const MAX_VIEW_CHARS = 1 << 20;
const MAX_PARTIAL_CHARS = 64 * 1024;

export function cleanConsoleText(raw: string): string {
  return replaceControls(stripVTControlCharacters(raw), () => '', TAB_AND_NEWLINE);
}

interface Waiter {
  test: (text: string) => boolean;
  resolve: (text: string) => void;
  reject: (e: unknown) => void;
}

export class SerialConsole {
  private readonly decoder = new StringDecoder('utf8');
  /** Complete lines since the last mark(), cleaned. */
  private view = '';
  /** Raw text of the line being received; its first `skip` characters came before the last mark(). */
  private partial = '';
  private skip = 0;
  private tail = '';
  private readonly waiters = new Set<Waiter>();
  private closedWith: unknown;

  constructor(
    private readonly mask: (text: string) => string,
    private readonly onLine?: (line: string) => void,
  ) {}

  feed(bytes: Buffer): void {
    let text = this.partial + this.decoder.write(bytes);
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n')) {
      const raw = text.slice(0, nl);
      text = text.slice(nl + 1);
      const line = this.mask(cleanConsoleText(raw));
      this.view = (this.view + this.mask(cleanConsoleText(raw.slice(this.skip))) + '\n').slice(-MAX_VIEW_CHARS);
      this.skip = 0;
      this.tail = (this.tail + line + '\n').slice(-TAIL_CHARS);
      this.onLine?.(line);
    }
    if (text.length > MAX_PARTIAL_CHARS) {
      this.skip = Math.max(0, this.skip - (text.length - MAX_PARTIAL_CHARS));
      text = text.slice(-MAX_PARTIAL_CHARS);
    }
    this.partial = text;
    for (const w of [...this.waiters]) {
      const now = this.text();
      if (w.test(now)) {
        this.waiters.delete(w);
        w.resolve(now);
      }
    }
  }

  /** What the console printed since the last mark(), cleaned and masked. */
  text(): string {
    return this.view + this.mask(cleanConsoleText(this.partial.slice(this.skip)));
  }

  /** Forget what was printed so far: the next wait looks only at what comes after. */
  mark(): void {
    this.view = '';
    this.skip = this.partial.length;
  }

  /** The last lines of the whole console (masked), for the result. */
  consoleTail(): string {
    return (this.tail + this.mask(cleanConsoleText(this.partial))).slice(-TAIL_CHARS);
  }

  /** Resolves with the text since the last mark() once `test` holds; rejects with the signal's reason. */
  waitFor(test: (text: string) => boolean, signal: AbortSignal): Promise<string> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    if (signal.aborted) return Promise.reject(signal.reason);
    const now = this.text();
    if (test(now)) return Promise.resolve(now);
    return new Promise<string>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiters.delete(w);
        reject(signal.reason);
      };
      const w: Waiter = {
        test,
        resolve: (text) => {
          signal.removeEventListener('abort', onAbort);
          resolve(text);
        },
        reject: (e) => {
          signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(w);
    });
  }

  /** The guest is gone: every wait, present and future, rejects with `reason`. */
  close(reason: unknown): void {
    this.closedWith ??= reason;
    for (const w of [...this.waiters]) {
      this.waiters.delete(w);
      w.reject(this.closedWith);
    }
  }
}
