// The shape of a route handler, typed by the operations table (style example 2): the handler of
// operation `Id` receives that operation's path parameters and request document, and must answer
// with its response root — a document or a streamed list of that root, the file of a download, or
// 204 when the operation has no response root. A handler never names a root: `req.body()`,
// `req.ok()`, `req.created()` and `req.list()` take it from the table. Routes never touch Fastify's
// reply, so status codes, headers and errors are written in one place (http/register.ts).
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { DecodedDocument } from '../../codec/xml';
import type { DocumentOf, DocumentRoot } from '../../model/resources';
import type { Operation, OperationById, OperationId, PathParams } from '../../model/operations';
import type { Caller } from '../auth/authenticate';

type Op<Id extends OperationId> = OperationById<Id>;
type RequestRoot<Id extends OperationId> = Op<Id>['request'];
type ResponseRoot<Id extends OperationId> = Op<Id>['response'];

/**
 * Trailing path parameters an operation is also served without (spec endpoint table: the upload's
 * file name is optional, `…/bin` takes the artifact's name). http/register.ts adds the shorter path.
 */
export const optionalTail = { mySoftwareArtifact_upload: 'fileName' } as const satisfies Partial<Record<OperationId, string>>;

type TableParams<Id extends OperationId> = PathParams<Op<Id>['path']>;

/** `{ uid: string; aid: string }` for `/users/{uid}/appliances/{aid}`; an optional tail may be absent. */
export type ParamsOf<Id extends OperationId> = Id extends keyof typeof optionalTail
  ? Omit<TableParams<Id>, (typeof optionalTail)[Id]> & Partial<Record<(typeof optionalTail)[Id], string>>
  : TableParams<Id>;

/** What every request carries, whatever its operation. */
export interface ReqBase {
  readonly op: Operation;
  /** Query parameters, first value of each (the signature's `apiKey`/`signature` included). */
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly caller: Caller;
  /** `http://host:port/api`, to build absolute `Location` and `requestUri` values. */
  readonly baseUrl: string;
  readonly raw: FastifyRequest;
}

/** A request with the path parameters `P` (and `{uid}`): what the record loaders of routes/common.ts take. */
export interface ReqWith<P extends string> {
  readonly params: Readonly<Record<P, string>>;
}

interface BodyOf<R extends DocumentRoot> {
  /** Decode the request document of the operation's root; 400 when absent or malformed, 415 when not XML/JSON. */
  body(): DecodedDocument<DocumentOf<R>>;
}

/** `T` with no field that the document of the root does not have (structural typing alone lets an Image pass for an Appliance). */
type Exact<T, Shape> = T & { readonly [K in Exclude<keyof T, keyof Shape>]: never };

/** The fields of a document that are lists, and the type of their items. */
type ListFieldOf<R extends DocumentRoot> = {
  [K in keyof DocumentOf<R>]-?: NonNullable<DocumentOf<R>[K]> extends ReadonlyArray<object> ? K & string : never;
}[keyof DocumentOf<R>];
type ItemOf<R extends DocumentRoot, L extends ListFieldOf<R>> = NonNullable<DocumentOf<R>[L]> extends ReadonlyArray<infer I> ? I : never;

/** How a handler answers with its operation's response root. */
export interface Answers<R extends DocumentRoot> {
  /** 200 with the document. */
  ok<T extends DocumentOf<R>>(value: Exact<T, DocumentOf<R>>): DocResult<R>;
  /** 201 with the created record, `Location` its `uri`. */
  created<T extends DocumentOf<R> & { readonly uri: string }>(value: Exact<T, DocumentOf<R>>): DocResult<R>;
  /** 200 with the document whose last field, the list `list`, is written as `items` are read. */
  list<L extends ListFieldOf<R>>(value: Omit<DocumentOf<R>, L>, list: L, items: Iterable<ItemOf<R, L>>, version: string): StreamedListResult<R>;
}

/** The request of operation `Id`: its parameters, its body when it has a request root, its answers when it has a response root. */
export type Req<Id extends OperationId> = ReqBase & { readonly params: Readonly<ParamsOf<Id>> } & (RequestRoot<Id> extends DocumentRoot ? BodyOf<RequestRoot<Id>> : unknown) &
  (ResponseRoot<Id> extends DocumentRoot ? Answers<ResponseRoot<Id>> : unknown);

export interface DocResult<R extends DocumentRoot = DocumentRoot> {
  readonly root: R;
  readonly value: DocumentOf<R>;
  /** Relative URI of the created record (201 → absolute `Location`). */
  readonly location?: string;
}

export interface FileResult {
  /** The bytes, opened only when they are sent (never for HEAD or a 304). */
  open(): Promise<Readable>;
  size: number;
  contentType: string;
  fileName: string;
  etag: string;
  lastModified?: string;
}

/**
 * A document whose last field, the list `list`, is written to the socket as `items` are read (in
 * chunks, with backpressure), so no answer is built whole. `version` names the contents for the ETag
 * (the same version is the same list).
 */
export interface StreamedListResult<R extends DocumentRoot = DocumentRoot> {
  readonly root: R;
  readonly value: Partial<DocumentOf<R>>;
  readonly list: string;
  readonly items: Iterable<Record<string, unknown>>;
  readonly version: string;
}

export interface NoContent {
  readonly status: 204;
}

export const NO_CONTENT: NoContent = { status: 204 };

/**
 * What the handler of `Id` returns: a document (or streamed list) of its response root; for an
 * operation without one, the file of a GET (a download, operations.ts) or 204.
 */
export type ResultOf<Id extends OperationId> =
  ResponseRoot<Id> extends DocumentRoot ? DocResult<ResponseRoot<Id>> | StreamedListResult<ResponseRoot<Id>> : Op<Id>['method'] extends 'GET' ? FileResult : NoContent;

export type Result = DocResult | StreamedListResult | FileResult | NoContent;

export type Handler<Id extends OperationId> = (req: Req<Id>) => ResultOf<Id> | Promise<ResultOf<Id>>;

/** One handler for every operation of the table: a missing one, or one with the wrong answer, does not compile. */
export type Routes = { readonly [Id in OperationId]: Handler<Id> };
