// The OS layer cache's shared tier: a layer one machine built, restored by the others instead of
// running mmdebstrap again (a build farm's workers share it through its database and bucket).
//
// A layer travels as a tar archive made inside the build's namespace (layer-archive.ts). Its key is the
// layer's own key without the host ids (`sharedLayerKey`).
import { ForgeError } from '../../errors';
import type { InstalledPackage } from '../stages';

/** What a restored layer needs besides its tree. */
export interface SharedLayerMeta {
  readonly installed: readonly InstalledPackage[];
  readonly sourceDateEpoch: number;
}

export interface SharedLayerTier {
  /** Where the tier is, for messages (the bucket's place). */
  readonly where: string;
  /** Writes the archive of `key` to `dest` (its digest checked) and answers its meta; undefined when the tier has none. */
  fetch(key: string, dest: string, signal?: AbortSignal): Promise<SharedLayerMeta | undefined>;
  /** True when the tier has `key` (one look, no download). */
  has(key: string): Promise<boolean>;
  /** Keeps the archive under `key` (a key kept already stays as it is); the file stays the caller's. */
  put(key: string, archive: string, meta: SharedLayerMeta, signal?: AbortSignal): Promise<void>;
  /** The tier-wide lock of `key` (one machine builds a key at a time): undefined while another holds it. */
  tryLock(key: string): Promise<(() => Promise<void>) | undefined>;
}

/** A shared layer's archive or meta that is not what was stored: the layer is then built here (a warning, never a failed build). */
export class SharedLayerError extends ForgeError {
  static readonly code = 'E_SHARED_LAYER';
  constructor(message: string) {
    super(message);
    this.name = 'SharedLayerError';
  }
}

/** The meta kept with a layer (`{ installed, sourceDateEpoch }` JSON), checked: a database or a folder others may write holds it. */
export function parseSharedLayerMeta(text: string, which: string): SharedLayerMeta {
  const bad = (): never => {
    throw new SharedLayerError(`the shared OS layer ${which} has a malformed meta`);
  };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return bad();
  }
  const m = v as { installed?: unknown; sourceDateEpoch?: unknown };
  if (!Number.isSafeInteger(m.sourceDateEpoch) || !Array.isArray(m.installed)) return bad();
  const installed = (m.installed as unknown[]).map((p): InstalledPackage => {
    const q = p as Partial<Record<keyof InstalledPackage, unknown>> | null;
    if (typeof q?.name !== 'string' || typeof q.version !== 'string' || typeof q.arch !== 'string') return bad();
    return { name: q.name, version: q.version, arch: q.arch };
  });
  return { installed, sourceDateEpoch: m.sourceDateEpoch as number };
}
