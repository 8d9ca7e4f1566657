// Resource URIs (spec "Resource URIs", wire contract §1): a URI is an operation's path, relative to the
// base URL and without its leading slash. Formatting and parsing both come from the operations table,
// so no URI shape is written anywhere else.
import { fillPath, operations, pathParamNames, type OperationById, type OperationId, type PathParams } from './operations';

type PathOf<Id extends OperationId> = OperationById<Id>['path'];
type AppliancePublicationPath = `${PathOf<'machineImagePublished_getAll'>}/{pitid}`;

/**
 * Shapes a URI can have: every operation's path, and the one shape no operation serves — a publication
 * named under its template's `pimages` collection, which a service may answer with (the image is then
 * in the record's `imageUri`).
 */
export type UriShape = OperationId | 'appliancePublication';
type ShapePath<S extends UriShape> = S extends OperationId ? PathOf<S> : AppliancePublicationPath;

/** `{uid: string; aid: string}` for the shape of `/users/{uid}/appliances/{aid}`. */
export type UriParams<S extends UriShape> = PathParams<ShapePath<S>>;
/** What a URI formats from: each parameter as text or a number id. */
export type UriValues<S extends UriShape> = { readonly [K in keyof UriParams<S>]: string | number };

const paths = new Map<UriShape, string>(operations.map((o) => [o.id, o.path]));
paths.set('appliancePublication', `${paths.get('machineImagePublished_getAll')}/{pitid}`);

function pathOf(shape: UriShape): string {
  const p = paths.get(shape);
  if (p === undefined) throw new TypeError(`no URI shape ${JSON.stringify(shape)}`);
  return p;
}

/** The URI of `shape` with `values` filled in, each percent-encoded as one segment. */
export function uriOf<S extends UriShape>(shape: S, values: UriValues<S>): string {
  return fillPath(pathOf(shape), values).slice(1);
}

const SEGMENT = '[^/?#]+';
const escapeLiteral = (s: string): string => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
const loose = new Map<UriShape, RegExp>();

/**
 * A URI exactly as the service writes it (no leading or trailing slash): for input checks that want
 * the canonical form. Parse with `parseUri`.
 */
export function uriPattern(shape: UriShape): RegExp {
  return new RegExp(`^${shapeSource(shape, SEGMENT)}$`);
}

function shapeSource(shape: UriShape, segment: string): string {
  return pathOf(shape)
    .slice(1)
    .split(/(\{\w+\})/)
    .map((part) => (/^\{\w+\}$/.test(part) ? segment : escapeLiteral(part)))
    .join('');
}

function looseRegExp(shape: UriShape): RegExp {
  let re = loose.get(shape);
  if (!re) {
    re = new RegExp(`^/*${shapeSource(shape, `(${SEGMENT})`)}/?$`);
    loose.set(shape, re);
  }
  return re;
}

/** A URI as the service emits it: no leading slash, `distributions/…` for the spec table's `distribution/…`. */
export function canonicalUri(uri: string): string {
  return uri.replace(/^\/+/, '').replace(/^distribution\//, 'distributions/');
}

export type ParsedUri<S extends UriShape> = { [K in S]: { shape: K; params: UriParams<K> } }[S];

/**
 * Which of `shapes` a URI has, and its parameters percent-decoded; undefined when it has none of them
 * (bad percent-encoding included). Leading slashes and one trailing slash are tolerated, and
 * `distribution/…` reads as `distributions/…` (the spec's table writes it so; wire contract §1).
 */
export function parseUri<const S extends UriShape>(uri: string, shapes: readonly S[]): ParsedUri<S> | undefined {
  const text = canonicalUri(uri);
  for (const shape of shapes) {
    const m = looseRegExp(shape).exec(text);
    if (!m) continue;
    const params: Record<string, string> = {};
    try {
      pathParamNames(pathOf(shape)).forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1]!)));
    } catch {
      return undefined;
    }
    return { shape, params } as ParsedUri<S>;
  }
  return undefined;
}

/** The parameters of a URI of `shape`; a TypeError naming the shape when it is not one. */
export function uriParams<S extends UriShape>(shape: S, uri: string): UriParams<S> {
  const p = parseUri(uri, [shape]);
  if (!p) throw new TypeError(`not a URI of the shape ${pathOf(shape).slice(1)}: ${JSON.stringify(uri.slice(0, 200))}`);
  return p.params;
}

/** `users/<uid>/mysoftware/<msid>`: a shape as messages show it. */
export function uriShapeText(shape: UriShape): string {
  return pathOf(shape).slice(1).replace(/\{(\w+)\}/g, '<$1>');
}
