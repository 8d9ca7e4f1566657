// The service's limits, in one table: those an operator sets (`serve --max-…`, with their defaults) and
// those fixed by what an image can hold. The server enforces them, the image build obeys them, and the
// engine checks a declaration against the fixed ones offline.

/** What an operator may set when starting a server (`serve` options); the defaults are DEFAULT_LIMITS. */
export interface Limits {
  /** XML/JSON request documents (→ 413 above it). */
  bodyBytes: number;
  /** One uploaded artifact (→ 413 above it). */
  uploadBytes: number;
  /** Largest installProfile.diskSize a user may ask for, in MiB (→ 400 above it; `serve --max-disk-mib`). */
  maxDiskMiB: number;
  /**
   * When above 0, every signed URL must carry a signed `expires` (Unix seconds) at most this far ahead
   * (→ 401 otherwise; `serve --signed-url-max-age`). An `expires` in the past is refused in any case.
   */
  signedUrlMaxAgeSeconds: number;
  /** A request's head must arrive within this (→ 408). */
  headersTimeoutMs: number;
  /** A whole request, body included, must arrive within this (→ 408; raise it for very large uploads on slow links). */
  requestTimeoutMs: number;
  /** A connection with no byte in either direction for this long is answered 408 (when no answer began) and closed. */
  idleTimeoutMs: number;
  /** Open (queued or running) generations and publications per user (→ 429 + Retry-After; `serve --max-jobs-per-user`). */
  jobsPerUser: number;
  /** … and on the whole server (→ 503 + Retry-After; `serve --max-jobs`). */
  jobsTotal: number;
  /** Failed authentications (a bad signature or password) one address may make per minute; then 429 + Retry-After. */
  authFailuresPerMinute: number;
  /**
   * A build (from its build slot to its file) that runs longer is stopped and ends in error
   * (`serve --max-build-minutes`): a build that hangs on a mirror or a package script holds a slot forever otherwise.
   */
  buildTimeoutMs: number;
  /** Images (any status) one user may hold; one more is a 403 (`serve --max-images-per-user`). */
  imagesPerUser: number;
  /** Bytes of uploaded software files one user may keep in all (→ 507; `serve --max-storage-mib-per-user`). */
  storageBytesPerUser: number;
}

/** Smallest disk: a Minimal Debian with its kernel and initramfs takes about 400 MiB, with room to run. */
export const MIN_DISK_MIB = 1024;
/** Largest disk an MBR partition table can describe with 512-byte sectors (2 TiB). */
export const MAX_DISK_MIB = 2 * 1024 * 1024;
/** Disk size of an image whose profile gives none (MiB): a Minimal Debian 12 with room for packages. */
export const DEFAULT_DISK_MIB = 2048;

/** Image builds one node runs at once when `serve --max-builds` is not given. */
export const DEFAULT_MAX_BUILDS = 1;
/** setTimeout's bound (2^31 - 1 ms, about 24.8 days): a longer delay would fire at once; the longest build timeout. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export const DEFAULT_LIMITS: Limits = {
  bodyBytes: 1024 * 1024,
  uploadBytes: 4 * 1024 * 1024 * 1024,
  maxDiskMiB: 65536,
  signedUrlMaxAgeSeconds: 0,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 15 * 60_000,
  idleTimeoutMs: 120_000,
  jobsPerUser: 8,
  jobsTotal: 16,
  authFailuresPerMinute: 60,
  buildTimeoutMs: 60 * 60_000,
  imagesPerUser: 50,
  storageBytesPerUser: 20 * 1024 ** 3,
};

/** What one install profile and one software file may hold: fixed, the same on every server. */
export const PROFILE_LIMITS = {
  users: 100,
  groups: 100,
  sshKeysPerAccount: 32,
  welcomeChars: 4096,
  kernelParameterChars: 1024,
  passwordChars: 1024,
  accountNameChars: 32,
  fullNameChars: 256,
  pathChars: 255,
  sshKeyNameChars: 128,
  /** An uploaded file's name, in UTF-8 bytes (a file name on ext4). */
  fileNameBytes: 255,
} as const;
