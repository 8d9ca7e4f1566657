// The types of the client's per-operation methods, derived from the operations table (style
// example 2): path parameters, `body`, `params`, `signal`, `ifMatch` in; the response document out.
import type { Writable } from 'node:stream';
import type { OperationById, OperationId, PathParams } from '../model/operations';
import type { DocumentOf, DocumentRoot } from '../model/resources';
import type { QueryValue } from './wire';
import type { DownloadResult, Progress, UploadSource } from './transfer';

/** Common to every call. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
  /** `If-Match` for a PUT or DELETE that must not overwrite a concurrent change (wire contract §6). */
  ifMatch?: string;
}

/** Path values are strings or numbers; `uid` may be left out and then is the client's login. */
type PathArgs<P extends string> = {
  [K in Exclude<keyof PathParams<P>, 'uid'>]: string | number;
} & ('uid' extends keyof PathParams<P> ? { uid?: string } : {});

type QueryArgs<Q extends string> = [Q] extends [never] ? {} : { params?: { [K in Q]?: QueryValue } };

type IsUpload<Id extends string> = Id extends `${string}_upload` ? true : false;
type IsDownload<O> = O extends { method: 'GET'; response: null } ? true : false;

type BodyArgs<O extends { id: string; request: DocumentRoot | null; method: string; response: DocumentRoot | null }> =
  IsUpload<O['id']> extends true
    ? { body: UploadSource; onProgress?: (p: Progress) => void }
    : IsDownload<O> extends true
      ? { to: string | Writable; onProgress?: (p: Progress) => void }
      : O['request'] extends DocumentRoot
        ? { body: DocumentOf<O['request']> }
        : {};

/** The argument object of an operation's method. */
export type ArgsOf<Id extends OperationId> = PathArgs<OperationById<Id>['path']> &
  QueryArgs<OperationById<Id>['query'][number]> &
  BodyArgs<OperationById<Id>> &
  CallOptions;

/** What an operation's method resolves with: the response document, a download's result, or void (204). */
export type ResultOf<Id extends OperationId> =
  IsDownload<OperationById<Id>> extends true
    ? DownloadResult
    : OperationById<Id>['response'] extends DocumentRoot
      ? DocumentOf<OperationById<Id>['response']>
      : void;

/** One method per operation id. */
export type OperationMethods = {
  [Id in OperationId]: {} extends ArgsOf<Id> ? (args?: ArgsOf<Id>) => Promise<ResultOf<Id>> : (args: ArgsOf<Id>) => Promise<ResultOf<Id>>;
};

/** What `client.send()` resolves with. */
export interface SendResult<T> {
  status: number;
  headers: Record<string, string>;
  value: T;
  /** The value came from the conditional-GET cache (the server answered 304). */
  fromCache: boolean;
}
