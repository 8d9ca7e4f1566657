// How the command line shows the engine's events: bars redrawn in place on a terminal, plain lines
// otherwise (CI logs, `TERM=dumb`), JSON Lines with `--json` (stdout holds the one JSON document,
// the events go to stderr; the same records fill `--log-file`), nothing with `--quiet`. `NO_COLOR`
// (no-color.org) keeps the bars but drops the colours and bold.
import type { EngineEvent } from '../engine';

export interface Out {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export type Renderer = { event(e: EngineEvent): void; finish(): void };
export type RenderMode = 'tty' | 'plain' | 'silent';

/** Redrawn bars only on a terminal that can move the cursor. */
export function renderMode(out: Out, env: Readonly<Record<string, string | undefined>>, o: { silent?: boolean } = {}): RenderMode {
  if (o.silent) return 'silent';
  return out.isTTY && env.TERM !== 'dumb' ? 'tty' : 'plain';
}

/** Colours unless NO_COLOR is set to anything non-empty (no-color.org) or the terminal is dumb. */
export function useColor(env: Readonly<Record<string, string | undefined>>): boolean {
  return !env.NO_COLOR && env.TERM !== 'dumb';
}

export function createRenderer(mode: RenderMode, out: Out, o: { color?: boolean } = {}): Renderer {
  if (mode === 'silent') return { event: () => {}, finish: () => {} };
  return mode === 'tty' ? ttyRenderer(out, o.color ?? true) : plainRenderer(out);
}

export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

/** One JSON object per line (jsonlines.org), each with its time: the engine's events and log lines. */
export type JsonLines = Renderer & { log(level: LogLevel, message: string): void };

/**
 * The records (docs/cli-guide.md "Output"): `phase` {phase, message}, `step` {message}, `progress` {resource,
 * label, percentage, message?, bytesDone?, bytesTotal?} once per percentage and message of a resource,
 * `done` {resource, label, ok, message?}, and `log` {level, message}; each with `type` and `time`.
 * `mask` is applied to every text written (the engine's events come masked already).
 */
export function jsonLines(out: Out, mask: (text: string) => string = (t) => t, now: () => Date = () => new Date()): JsonLines {
  const lastProgress = new Map<string, string>();
  const write = (record: Readonly<Record<string, unknown>>) => {
    const masked = Object.fromEntries(Object.entries(record).map(([k, v]) => [k, typeof v === 'string' ? mask(v) : v]));
    out.write(`${JSON.stringify({ type: masked.type, time: now().toISOString(), ...masked })}\n`);
  };
  return {
    event(e) {
      switch (e.type) {
        case 'phase': write({ type: e.type, phase: e.phase, message: e.title }); break;
        case 'step': write({ type: e.type, message: e.message }); break;
        case 'progress': {
          // Uploads and downloads report every chunk: one record per percent is plenty.
          const seen = `${e.percentage} ${e.message ?? ''}`;
          if (lastProgress.get(e.id) === seen) break;
          lastProgress.set(e.id, seen);
          const { type, id, ...rest } = e;
          write({ type, resource: id, ...rest });
          break;
        }
        case 'done': {
          const { type, id, ...rest } = e;
          write({ type, resource: id, ...rest });
          break;
        }
      }
    },
    log: (level, message) => write({ type: 'log', level, message }),
    finish() {},
  };
}

function plainRenderer(out: Out): Renderer {
  // Progress only at each quarter, so a long job writes a bounded number of lines.
  const lastQuarter = new Map<string, number>();
  return {
    event(e) {
      switch (e.type) {
        case 'phase': out.write(`== ${e.title}\n`); break;
        case 'step': out.write(`${e.message}\n`); break;
        case 'progress': {
          const q = Math.floor(e.percentage / 25);
          if (q > (lastQuarter.get(e.id) ?? -1) && q < 4) {
            lastQuarter.set(e.id, q);
            out.write(`${e.label}: ${e.percentage}%${e.message ? ` ${e.message}` : ''}\n`);
          }
          break;
        }
        case 'done': out.write(`${e.label}: ${e.ok ? 'done' : `failed${e.message ? `: ${e.message}` : ''}`}\n`); break;
      }
    },
    finish() {},
  };
}

function bar(pct: number, width = 20): string {
  const n = Math.max(0, Math.min(width, Math.round((pct / 100) * width)));
  return `[${'#'.repeat(n)}${'.'.repeat(width - n)}] ${String(pct).padStart(3)}%`;
}

function ttyRenderer(out: Out, color: boolean): Renderer {
  const bold = (t: string) => (color ? `\x1b[1m${t}\x1b[0m` : t);
  const active = new Map<string, { label: string; pct: number }>();
  let drawn = 0;
  const clear = () => {
    // Move up over the bars drawn last time and clear them.
    if (drawn) out.write(`\x1b[${drawn}A\x1b[J`);
    drawn = 0;
  };
  const draw = () => {
    const cols = out.columns ?? 100;
    for (const t of active.values()) out.write(`${`${bar(t.pct)} ${t.label}`.slice(0, cols - 1)}\n`);
    drawn = active.size;
  };
  const line = (text: string) => {
    clear();
    out.write(`${text}\n`);
    draw();
  };
  return {
    event(e) {
      switch (e.type) {
        case 'phase': line(bold(e.title)); break;
        case 'step': line(`  ${e.message}`); break;
        case 'progress':
          clear();
          active.set(e.id, { label: e.label, pct: e.percentage });
          draw();
          break;
        case 'done':
          active.delete(e.id);
          line(`  ${e.ok ? '✓' : '✗'} ${e.label}${e.message ? `: ${e.message}` : ''}`);
          break;
      }
    },
    finish() {
      clear();
      active.clear();
    },
  };
}
