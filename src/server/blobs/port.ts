// The BlobStore port: the bytes of uploads, images and SBOMs, under keys the database holds
// (`files/<random>-<name>`, `images/<random>-<name>`). The data folder keeps them on this node's disk
// (blobs/local.ts, the embedded default); an S3 bucket keeps them for every node (blobs/s3.ts). A key
// is written once and never changed: a new file is a new key, the database says which one is live.
import type { Readable } from 'node:stream';

/** `layers`: the OS layers a farm's workers share (shared-layers.ts), in a bucket only. */
export type BlobArea = 'files' | 'images' | 'layers';

export interface WrittenBlob {
  /** `<area>/<name>`, what records keep as a file's `path`. */
  key: string;
  size: number;
  sha256: string;
  md5: string;
}

/** A write asked to leave its digests for later (`lateDigests`, local store only): absent when it did. */
export type WrittenUpload = Omit<WrittenBlob, 'sha256' | 'md5'> & Partial<Pick<WrittenBlob, 'sha256' | 'md5'>>;

export interface WriteOptions {
  /** The local store may answer before the digests of a large write (blobs/late-digests.ts); S3 always computes them. */
  readonly lateDigests?: boolean;
  readonly signal?: AbortSignal | undefined;
}

export type BlobBackend = 'local' | 's3';

export interface BlobStore {
  readonly backend: BlobBackend;
  /** Where the blobs are, for the start line and errors (a folder, or `s3://bucket/prefix` at an endpoint). */
  readonly where: string;
  /** True when every node reaches the same blobs (S3), false for one node's disk. */
  readonly shared: boolean;
  /**
   * Stream `source` under a fresh key of `area` with its sha256 and md5 (late, when asked and allowed),
   * holding a few MiB in memory at most. Over `maxBytes` → 413 and nothing is kept. `expectedBytes`
   * (a Content-Length) may pick how the digests are computed.
   */
  write(source: AsyncIterable<Uint8Array>, area: BlobArea, suffix: string, maxBytes: number, expectedBytes?: number, o?: WriteOptions): Promise<WrittenUpload>;
  /**
   * A local path to write a file that `adopt` then takes (a built image): in the data folder's `tmp/`
   * for the local store, so that adopting it is a rename; in the node's temporary folder for S3.
   */
  scratchPath(suffix: string): string;
  /** Takes the finished local file under a fresh key of `area` (moved or uploaded, then removed); its digests are the caller's. */
  adopt(localPath: string, area: BlobArea, suffix: string, signal?: AbortSignal): Promise<string>;
  /**
   * Stores a copy of the local file under exactly `key` (`appliance-forge migrate`, which keeps every
   * key of the data folder it copies); the local file is left as it is.
   */
  copyIn(localPath: string, key: string, signal?: AbortSignal): Promise<void>;
  /** The blob's bytes from its start; a key that is not one of this store's is an error, never another file. */
  open(key: string): Promise<Readable>;
  /** Copies the blob to a new local file `dest` (a build's input on a worker). */
  fetch(key: string, dest: string, signal?: AbortSignal): Promise<void>;
  /**
   * The blob as a file of this node, where the store keeps it so (local): a build, a late digest or a
   * publication reads it there instead of a copy. Undefined for a store without local files (S3).
   */
  localPath?(key: string): string;
  /** Removes the blob; an absent one is no error. */
  remove(key: string | undefined): Promise<void>;
  /**
   * Removes what no record names: blobs whose keys are not `live` and older than `graceMs` (a write
   * whose record is not committed yet is younger), interrupted writes (multipart uploads) past it.
   */
  sweep(live: ReadonlySet<string>, graceMs: number): Promise<{ removed: number }>;
  /** Answers when the store does (the health route). */
  ping(): Promise<void>;
  /** Closes its connections, where it has any. */
  close?(): void;
}
