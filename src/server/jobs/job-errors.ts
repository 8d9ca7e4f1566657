// The one place a failed job's error becomes words. A job's status is read by its user, so it says
// in one sentence what failed and what the user can do, without the server's paths (data folder,
// cache folder, temporary folders) or a tool's raw output; the whole error, paths and tool output
// included, goes to the server log for the operator. Facts the user needs (apt's "unknown package
// foo (not in the mirror)", a refused destination in the image) are kept, minus server paths.
import { tmpdir } from 'node:os';
import type { OpStatus } from '../../model/resources';
import { isForgeError, messageOf } from '../../errors';
import type { Ctx } from '../context';
import { isImagingError } from '../../imaging';
import { OpenStackError } from '../../openstack/errors';
import { isServiceError } from '../service-error';
import type { JobKind } from '../queue/port';

/** Where the job was when it failed: the words name it. */
export type JobStage = 'preparation' | 'os-layer' | 'disk' | 'publication';

const STAGE_WORDS: Readonly<Record<JobStage, string>> = {
  preparation: 'preparing the build',
  'os-layer': 'building the OS layer (the Debian packages)',
  disk: 'building the disk image',
  publication: 'publishing the image',
};

/** Enough for apt's list of packages it cannot install together; beyond it the log has the rest. */
const MAX_FACT = 300;

const ASK_OPERATOR = "tell the server's operator (the server log has the details)";

/** The user's words for a job that ended with `e` during `stage`. */
export function jobErrorWords(e: unknown, stage: JobStage, serverDirs: readonly string[]): string {
  const at = STAGE_WORDS[stage];
  // Written for the user by this server (limits, free space): kept as they are.
  if (isServiceError(e)) return fact(e.message, serverDirs);
  // Keystone's or Glance's own message, already scrubbed of secrets and cut by the OpenStack module.
  if (isForgeError(e, OpenStackError)) return `${at} failed: ${fact(e.message, serverDirs)}`;
  // spawn's own error (raw, or wrapped by a tool runner) for a command line past the system's limit.
  if (errnoOf(e) === 'E2BIG' || (e instanceof Error && errnoOf(e.cause) === 'E2BIG')) {
    return `${at} failed: the OS profile lists more packages than one build can pass to the installer; list fewer packages (their dependencies come by themselves)`;
  }
  if (isImagingError(e)) {
    switch (e.kind) {
      case 'input':
        return `${at} failed: ${fact(e.message, serverDirs)}; change the template and generate again`;
      case 'disk-full':
        return diskFull(at);
      case 'prerequisite':
        return `${at} failed: this server lacks a tool image builds need; ${ASK_OPERATOR}`;
      case 'setup':
        return `${at} failed: a folder this server builds in (its cache or work folder) cannot be reached by its builds, which run as another user; ${ASK_OPERATOR}`;
      case 'tool':
        if (/^Debian mirror/.test(e.message)) return `${at} failed: the Debian mirror could not be reached or answered with an error; retry later, and if it persists ${ASK_OPERATOR}`;
        return `${at} failed: a build tool stopped with an error; retry, and if it fails again ${ASK_OPERATOR}`;
    }
  }
  const errno = errnoOf(e);
  if (errno === 'ENOSPC' || errno === 'EDQUOT') return diskFull(at);
  if (errno !== undefined) return `${at} failed: the server could not read or write its own files; ${ASK_OPERATOR}`;
  return `${at} failed because of an error inside the server; ${ASK_OPERATOR}`;
}

function diskFull(at: string): string {
  return `${at} failed: the server ran out of disk space; retry later, or ask the server's operator to free space`;
}

/** The status patch of a failed job, its words from `jobErrorWords` (or `words`); the whole error goes to the log. */
export function failedJob(ctx: Pick<Ctx, 'log' | 'blobs' | 'imaging'>, kind: JobKind, id: number, e: unknown, stage: JobStage, words?: string): Partial<OpStatus> {
  const m = words ?? jobErrorWords(e, stage, serverDirs(ctx));
  ctx.log.error({ job: `${kind}:${id}`, stage, err: e, detail: detailOf(e) }, `job ${kind}:${id} failed: ${m}`);
  return { error: true, errorMessage: m, detailedError: true, detailedErrorMsg: m, message: kind === 'image' ? 'generation failed' : 'publication failed' };
}

/** The folders of this server whose paths never reach a user. */
function serverDirs(ctx: Pick<Ctx, 'blobs' | 'imaging'>): string[] {
  return [...(ctx.blobs.backend === 'local' ? [ctx.blobs.where] : []), ...(ctx.imaging.cacheDir !== undefined ? [ctx.imaging.cacheDir] : []), tmpdir()];
}

/** One line of the user's own facts: the server's folders replaced by "…", control characters out, cut short. */
function fact(text: string, serverDirs: readonly string[]): string {
  let s = text;
  for (const d of [...serverDirs].sort((a, b) => b.length - a.length)) if (d.length > 1) s = s.split(d).join('…');
  s = s.replace(/\p{Cc}+/gu, ' ').replace(/\s+/g, ' ').trim();
  return s.length > MAX_FACT ? `${s.slice(0, MAX_FACT - 1)}…` : s;
}

function errnoOf(e: unknown): string | undefined {
  const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) && !code.startsWith('E_') ? code : undefined;
}

/** The message with its causes, for the log. */
function detailOf(e: unknown): string {
  const parts: string[] = [];
  let cur: unknown = e;
  for (let i = 0; i < 5 && cur !== undefined && cur !== null; i++) {
    parts.push(messageOf(cur));
    cur = cur instanceof Error ? cur.cause : undefined;
  }
  return parts.join(' ← ');
}
