// createClient: options in, one method per operation out (derived from the operations table, style
// example 2), plus send, getByUri, upload, download and waitForJob over the fixed pipeline.
import type { Writable } from 'node:stream';
import type { Format } from '../codec/index';
import { echo } from '../error-text';
import { fillPath, operations, operationsById, type Operation, type OperationId } from '../model/operations';
import { documents, type DocumentOf, type DocumentRoot, type OpStatus, type SoftwareArtifact } from '../model/resources';
import { hasControl } from '../model/text-rules';
import { ResponseCache, type CacheOptions } from './cache';
import { waitForJob, type Job, type JobTarget, type WaitForJobOptions } from './jobs';
import type { ArgsOf, OperationMethods, ResultOf, SendResult } from './methods';
import { pipeline } from './pipeline';
import { retryPolicy, type RetryHooks, type RetryPolicy } from './retry';
import type { Auth } from './sign';
import { saveBody, uploadBody, type DownloadResult, type Progress, type UploadSource } from './transfer';
import { traced, type TraceEntry } from './trace';
import { createTransport } from './transport';
import { queryString, type Call, type Handler, type QueryValue } from './wire';

export interface ClientOptions {
  /** Base URL with its service path, e.g. `http://127.0.0.1:8080/api` (wire contract §1). */
  url: string;
  /** API key pair (requests are signed, §4) or login and password (Basic). */
  auth: Auth;
  /** Representation of requests and responses; default `xml` (§2–3). */
  format?: Format;
  /** Connect, response-headers and body-idle timeout per request; default 30 s. */
  timeoutMs?: number;
  /** Retry policy; `false` turns retries off. */
  retry?: Partial<RetryPolicy> | false;
  /** Conditional-GET cache (§6); off by default. */
  cache?: boolean | CacheOptions;
  userAgent?: string;
  /** For tests and diagnostics: told before each retry. */
  onRetry?: RetryHooks['onRetry'];
  /** Told after each HTTP exchange (method, path without the signature, status, ms): `APPLIANCE_FORGE_LOG=debug`. */
  onTrace?: (t: TraceEntry) => void;
  /** Honour `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` (undici's EnvHttpProxyAgent); default true. */
  proxy?: boolean;
}

export interface DownloadOptions {
  to: string | Writable;
  onProgress?: ((p: Progress) => void) | undefined;
  signal?: AbortSignal | undefined;
  /** Expected sha256 (hex) of the bytes: a mismatch throws ChecksumError and, for a path, keeps nothing. */
  sha256?: string;
}

export type DownloadOpId = {
  [Id in OperationId]: ResultOf<Id> extends DownloadResult ? Id : never;
}[OperationId];

export interface Client extends OperationMethods {
  /** The user the client acts as: the default `{uid}`. */
  readonly login: string;
  readonly baseUrl: string;
  readonly format: Format;
  /** Any operation by id, with the status and headers of the answer. */
  send<Id extends OperationId>(opId: Id, args?: ArgsOf<Id>): Promise<SendResult<ResultOf<Id>>>;
  /** Read any resource by its URI relative to the base URL (or absolute under it). */
  getByUri<R extends DocumentRoot>(root: R, uri: string, options?: { signal?: AbortSignal | undefined }): Promise<DocumentOf<R>>;
  /**
   * Upload a file to an artifact, streamed. The answer is the artifact with the file's `size`; its `sha256sum` and
   * `md5sum` may follow on the record (the reference server's, for 64 MiB or more): a read of the artifact has them.
   */
  upload(
    where: { uid?: string; msid: string | number; said: string | number; fileName: string },
    source: UploadSource,
    options?: { onProgress?: (p: Progress) => void; signal?: AbortSignal | undefined },
  ): Promise<SoftwareArtifact>;
  /** Download a binary by URI (e.g. an image's `downloadUri`) or by a download operation and its arguments. */
  download(source: string | ({ op: DownloadOpId } & Record<string, unknown>), options: DownloadOptions): Promise<DownloadResult>;
  waitForJob(target: JobTarget, options?: WaitForJobOptions): Promise<OpStatus>;
  /** Close the connection pool. */
  close(): Promise<void>;
}

const RESERVED = new Set(['body', 'params', 'signal', 'ifMatch', 'to', 'onProgress', 'op']);

export function createClient(options: ClientOptions): Client {
  const o = checkOptions(options);
  const base = new URL(o.url);
  const servicePath = base.pathname.replace(/\/+$/, '');
  const baseUrl = `${base.origin}${servicePath}`;
  const format: Format = o.format ?? 'xml';
  const transport = createTransport({
    origin: base.origin,
    servicePath,
    timeoutMs: o.timeoutMs ?? 30_000,
    userAgent: o.userAgent ?? 'appliance-forge',
    proxy: o.proxy !== false,
  });
  const store = o.cache ? new ResponseCache(o.cache === true ? {} : o.cache) : undefined;
  const handler: Handler = pipeline({
    transport: o.onTrace ? traced(transport.exchange, servicePath, o.onTrace) : transport.exchange,
    auth: o.auth,
    format,
    cache: store,
    retry: retryPolicy(o.retry),
    ...(o.onRetry ? { hooks: { onRetry: o.onRetry } } : {}),
  });
  const login = o.auth.login;

  /** The relative target of an operation: path filled (each value one segment), query appended. */
  function targetOf(op: Operation, args: Record<string, unknown>): string {
    const pathArgs: Record<string, string | number> = { uid: login };
    for (const [k, v] of Object.entries(args)) {
      if (RESERVED.has(k) || v === undefined) continue;
      if (typeof v !== 'string' && typeof v !== 'number') throw new TypeError(`${op.id}: path parameter "${k}" must be a string or a number`);
      pathArgs[k] = v;
    }
    const params = args.params as Record<string, QueryValue> | undefined;
    if (params !== undefined && (typeof params !== 'object' || params === null)) throw new TypeError(`${op.id}: params must be an object`);
    for (const k of Object.keys(params ?? {})) {
      if (!op.query.includes(k)) throw new TypeError(`${op.id}: unknown query parameter "${k}" (takes ${op.query.join(', ') || 'none'})`);
    }
    return fillPath(op.path, pathArgs).slice(1) + queryString(params);
  }

  async function run(id: OperationId, rawArgs: unknown): Promise<SendResult<unknown>> {
    const op = operationsById[id];
    if (!op) throw new TypeError(`unknown operation ${String(id)}`);
    const args = (rawArgs ?? {}) as Record<string, unknown>;
    if (typeof args !== 'object') throw new TypeError(`${id}: arguments must be an object`);
    const target = targetOf(op, args);
    const signal = args.signal as AbortSignal | undefined;
    const onProgress = args.onProgress as ((p: Progress) => void) | undefined;
    if (op.binary === 'download') {
      const r = await download(target, { to: args.to as string | Writable, onProgress, signal });
      return { status: 200, headers: {}, value: r, fromCache: false };
    }
    const call: Call = { method: op.method, target, idempotent: op.idempotent, expect: op.response, signal };
    if (typeof args.ifMatch === 'string') call.headers = { 'if-match': args.ifMatch };
    if (op.binary === 'upload') {
      call.raw = await uploadBody(args.body as UploadSource, onProgress);
    } else if (op.request) {
      if (typeof args.body !== 'object' || args.body === null) throw new TypeError(`${id}: body (a ${op.request} document) is required`);
      call.document = { root: op.request, value: args.body };
    }
    const r = await handler(call);
    return { status: r.status, headers: r.headers, value: r.value, fromCache: r.fromCache === true };
  }

  async function download(source: string, d: DownloadOptions): Promise<DownloadResult> {
    if (typeof d?.to !== 'string' && typeof (d?.to as Writable | undefined)?.write !== 'function') {
      throw new TypeError('download: `to` must be a path or a Writable');
    }
    const target = relativeTarget(source);
    const signal = d.signal;
    const r = await handler({ method: 'GET', target, idempotent: true, expect: 'stream', signal });
    return saveBody(r.body!, r.headers, d.to, { method: 'GET', target, signal }, d.onProgress, d.sha256);
  }

  /** A URI from a document, relative (`users/…`) or absolute under the base URL; nothing else. */
  function relativeTarget(uri: string): string {
    if (typeof uri !== 'string' || uri === '') throw new TypeError('uri must be a non-empty string');
    let rel = uri;
    if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) {
      if (!uri.startsWith(`${baseUrl}/`)) throw new TypeError(`uri ${JSON.stringify(uri)} is not under ${baseUrl}`);
      rel = uri.slice(baseUrl.length + 1);
    }
    rel = rel.replace(/^\/+/, '');
    if (/[\s#]/.test(rel) || hasControl(rel) || rel.split('?')[0]!.split('/').some((s) => s === '..' || s === '.')) {
      throw new TypeError(`uri ${JSON.stringify(uri)} is not a plain resource URI`);
    }
    return rel;
  }

  const jobCalls = {
    status: (job: Job, signal?: AbortSignal) =>
      run(job.kind === 'generation' ? 'machineImageStatus_get' : 'machineImagePublishedStatus_get', { ...job, signal }).then(
        (r) => r.value as OpStatus,
      ),
    cancel: (job: Job, signal?: AbortSignal) =>
      run(job.kind === 'generation' ? 'machineImageGeneration_cancel' : 'machineImagePublish_cancel', { ...job, signal }),
  };

  const methods = Object.fromEntries(
    operations.map((op) => [op.id, (args?: unknown) => run(op.id, args).then((r) => r.value)]),
  ) as unknown as OperationMethods;

  const client: Client = {
    ...methods,
    login,
    baseUrl,
    format,
    send: ((id: OperationId, args?: unknown) => run(id, args)) as Client['send'],
    async getByUri<R extends DocumentRoot>(root: R, uri: string, opts: { signal?: AbortSignal | undefined } = {}): Promise<DocumentOf<R>> {
      if (!Object.prototype.hasOwnProperty.call(documents, root)) throw new TypeError(`getByUri: unknown document root ${String(root)}`);
      const call: Call = { method: 'GET', target: relativeTarget(uri), idempotent: true, expect: root, signal: opts.signal };
      return (await handler(call)).value as DocumentOf<R>;
    },
    upload: (where, source, opts = {}) =>
      run('mySoftwareArtifact_upload', { ...where, body: source, ...opts }).then((r) => r.value as SoftwareArtifact),
    download: (source, opts) => {
      if (typeof source === 'string') return download(source, opts);
      const op = operationsById[source?.op];
      if (op?.binary !== 'download') throw new TypeError('download: op must be a download operation id');
      const { op: _op, ...args } = source;
      return download(targetOf(op, args), opts);
    },
    waitForJob: (target, opts) => waitForJob(jobCalls, target, opts),
    close: () => transport.close(),
  };
  return client;
}

/**
 * What is wrong with a service base URL, in words that follow "url" (`"foo" is not a URL`), or
 * undefined when it will do. Credentials in it are never echoed.
 */
export function baseUrlProblem(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${echo(url)} is not a URL`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be http: or https:';
  if (u.search || u.hash || u.username || u.password) return 'must not carry a query, fragment or credentials';
  return undefined;
}

function checkOptions(o: ClientOptions): ClientOptions {
  if (typeof o !== 'object' || o === null) throw new TypeError('createClient: options are required');
  const bad = baseUrlProblem(String(o.url));
  if (bad) throw new TypeError(`createClient: url ${bad}`);
  const a = o.auth as Partial<Record<'login' | 'publicKey' | 'secretKey' | 'password', unknown>> | undefined;
  if (!a || typeof a.login !== 'string' || a.login === '') throw new TypeError('createClient: auth.login is required');
  const apiKey = typeof a.publicKey === 'string' && typeof a.secretKey === 'string' && a.publicKey !== '' && a.secretKey !== '';
  const basic = typeof a.password === 'string';
  if (apiKey === basic) throw new TypeError('createClient: auth needs either {publicKey, secretKey} or {password}');
  if (o.format !== undefined && o.format !== 'xml' && o.format !== 'json') throw new TypeError('createClient: format must be "xml" or "json"');
  if (o.timeoutMs !== undefined && (!Number.isSafeInteger(o.timeoutMs) || o.timeoutMs <= 0)) {
    throw new TypeError('createClient: timeoutMs must be a positive integer');
  }
  return o;
}
