// The operations table: one row per line of `endpoints-in-scope.txt` (wire contract §1). The client
// derives its methods from it and the server registers its routes by the same ids
// (test/model/operations-drift.test.ts keeps it equal to the reference file).
import type { DocumentRoot } from './resources';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Operation<
  Id extends string = string,
  M extends Method = Method,
  P extends string = string,
  Req extends DocumentRoot | null = DocumentRoot | null,
  Res extends DocumentRoot | null = DocumentRoot | null,
  Q extends string = string,
> {
  readonly id: Id;
  readonly method: M;
  /** Path relative to the base URL, with `{name}` parameters. */
  readonly path: P;
  /** Root element of the request body, or null (no body, or raw bytes for an upload). */
  readonly request: Req;
  /** Root element of the response body, or null (204, or raw bytes for a download). */
  readonly response: Res;
  readonly query: readonly Q[];
  /** Safe to retry: GET, PUT and DELETE are; a POST never is (no silent duplicate create). */
  readonly idempotent: boolean;
  /** The body is raw bytes in (upload) or out (download). */
  readonly binary?: 'upload' | 'download';
  /** Not in the platform's interface: this server's own addition (docs/server.md, "Extensions"). */
  readonly extension?: true;
}

function op<const Id extends string, const M extends Method, const P extends string, const Req extends DocumentRoot | null, const Res extends DocumentRoot | null, const Q extends string>(
  id: Id, method: M, path: P, request: Req, response: Res, query: readonly Q[],
): Operation<Id, M, P, Req, Res, Q> {
  const binary = id.endsWith('_upload') ? 'upload' : method === 'GET' && response === null ? 'download' : undefined;
  return { id, method, path, request, response, query, idempotent: method !== 'POST', ...(binary ? { binary } : {}) };
}

/** An operation of this server's own, beyond the reference list. */
function ext<const Id extends string, const M extends Method, const P extends string, const Req extends DocumentRoot | null, const Res extends DocumentRoot | null, const Q extends string>(
  id: Id, method: M, path: P, request: Req, response: Res, query: readonly Q[],
): Operation<Id, M, P, Req, Res, Q> & { readonly extension: true } {
  return { ...op(id, method, path, request, response, query), extension: true };
}

export const operations = [
  op("os_getAll", "GET", "/distributions", null, "distributions", ["query", "descending", "orderBy", "count", "offset"]),
  op("os_get", "GET", "/distributions/{id}", null, "distribution", []),
  op("os_update", "PUT", "/distributions/{id}", "distribution", "distribution", []),
  op("osPkg_getAll", "GET", "/distributions/{id}/pkgs", null, "packages", ["query", "descending", "orderBy", "count", "offset", "latestOnly"]),
  op("osPkg_get", "GET", "/distributions/{id}/pkgs/{pid}", null, "package", []),
  op("osTemplate_getAll", "GET", "/distributions/{id}/profiles", null, "distribProfiles", ["query", "descending", "orderBy", "count", "offset"]),
  op("osTemplate_get", "GET", "/distributions/{id}/profiles/{prid}", null, "distribProfile", []),
  op("osTemplate_update", "PUT", "/distributions/{id}/profiles/{prid}", "distribProfile", "distribProfile", []),
  op("osTemplatePkgs_get", "GET", "/distributions/{id}/profiles/{prid}/pkgs", null, "packages", []),
  op("org_getAll", "GET", "/orgs", null, "orgs", []),
  op("org_get", "GET", "/orgs/{oid}", null, "org", []),
  op("uforgeStatus_get", "GET", "/status", null, "serviceStatus", []),
  op("user_get", "GET", "/users/{uid}", null, "user", []),
  op("user_update", "PUT", "/users/{uid}", "user", "user", []),
  op("cloudAccount_getAll", "GET", "/users/{uid}/accounts", null, "credAccounts", ["query", "descending", "orderBy", "count", "offset"]),
  op("cloudAccount_get", "GET", "/users/{uid}/accounts/{caid}", null, "credAccount", []),
  op("cloudAccount_update", "PUT", "/users/{uid}/accounts/{caid}", "credAccount", "credAccount", []),
  op("apiKey_getAll", "GET", "/users/{uid}/apikeys", null, "apiKeyPairs", []),
  op("apiKey_update", "PUT", "/users/{uid}/apikeys/{akid}", "apiKeyPair", "apiKeyPair", []),
  op("appliance_getAll", "GET", "/users/{uid}/appliances", null, "appliances", ["query", "descending", "orderBy", "count", "offset"]),
  op("appliance_get", "GET", "/users/{uid}/appliances/{aid}", null, "appliance", []),
  op("appliance_update", "PUT", "/users/{uid}/appliances/{aid}", "appliance", "appliance", []),
  op("machineImage_getAll", "GET", "/users/{uid}/appliances/{aid}/images", null, "images", ["query", "descending", "orderBy", "count", "offset"]),
  op("machineImageStatus_getAll", "GET", "/users/{uid}/appliances/{aid}/images/statuses", null, "statuses", []),
  op("machineImage_get", "GET", "/users/{uid}/appliances/{aid}/images/{itid}", null, "image", []),
  op("machineImage_download", "GET", "/users/{uid}/appliances/{aid}/images/{itid}/downloads", null, null, ["downloadId"]),
  op("machineImage_downloadFile", "GET", "/users/{uid}/appliances/{aid}/images/{itid}/downloads/{fileName}", null, null, ["downloadId"]),
  op("machineImagePublished_get", "GET", "/users/{uid}/appliances/{aid}/images/{itid}/pimages/{pitid}", null, "publishImage", []),
  op("machineImagePublishedStatus_get", "GET", "/users/{uid}/appliances/{aid}/images/{itid}/pimages/{pitid}/status", null, "status", []),
  op("machineImageStatus_get", "GET", "/users/{uid}/appliances/{aid}/images/{itid}/status", null, "status", []),
  op("applianceOSProfile_get", "GET", "/users/{uid}/appliances/{aid}/osprofile/{osid}", null, "distribProfile", []),
  op("applianceOSProfilePkg_getAll", "GET", "/users/{uid}/appliances/{aid}/osprofile/{osid}/pkgs", null, "packages", []),
  op("applianceOSProfilePkg_updateAll", "PUT", "/users/{uid}/appliances/{aid}/osprofile/{osid}/pkgs", "packages", "packages", []),
  op("machineImagePublished_getAll", "GET", "/users/{uid}/appliances/{aid}/pimages", null, "publishImages", []),
  op("userMachineImage_getAll", "GET", "/users/{uid}/images", null, "images", ["img"]),
  op("userMachineImageStatus_get", "GET", "/users/{uid}/images/status", null, "statuses", ["img"]),
  op("mySoftware_getAll", "GET", "/users/{uid}/mysoftware", null, "mySoftwareList", ["query", "descending", "orderBy", "count", "offset", "distribId"]),
  op("mySoftware_get", "GET", "/users/{uid}/mysoftware/{msid}", null, "mySoftware", []),
  op("mySoftware_update", "PUT", "/users/{uid}/mysoftware/{msid}", "mySoftware", "mySoftware", []),
  op("mySoftwareArtifact_getAll", "GET", "/users/{uid}/mysoftware/{msid}/artifacts", null, "softwareArtifacts", ["filename"]),
  op("mySoftwareArtifact_updateAll", "PUT", "/users/{uid}/mysoftware/{msid}/artifacts", "softwareArtifacts", "softwareArtifacts", ["recursive"]),
  op("mySoftwareArtifact_get", "GET", "/users/{uid}/mysoftware/{msid}/artifacts/{said}", null, "softwareArtifact", []),
  op("mySoftwareArtifact_update", "PUT", "/users/{uid}/mysoftware/{msid}/artifacts/{said}", "softwareArtifact", "softwareArtifact", ["recursive"]),
  op("mySoftwareArtifact_download", "GET", "/users/{uid}/mysoftware/{msid}/artifacts/{said}/bin", null, null, ["downloadId"]),
  op("mySoftwareArtifact_downloadFile", "GET", "/users/{uid}/mysoftware/{msid}/artifacts/{said}/bin/{fileName}", null, null, ["downloadId"]),
  op("userMachineImagePublished_getAll", "GET", "/users/{uid}/pimages", null, "publishImages", ["img"]),
  op("userMachineImagePublishedStatus_getAll", "GET", "/users/{uid}/pimages/status", null, "statuses", ["img"]),
  op("userTargetFormat_getAll", "GET", "/users/{uid}/targetformats", null, "targetFormats", ["query", "descending", "orderBy", "count", "offset"]),
  op("userTargetFormat_update", "PUT", "/users/{uid}/targetformats", "targetFormats", "targetFormats", ["org"]),
  op("osTemplate_create", "POST", "/distributions/{id}/profiles", "distribProfile", "distribProfile", ["basedOn"]),
  op("org_create", "POST", "/orgs", "org", "org", ["autoActivate", "hasGallery"]),
  op("cloudAccount_create", "POST", "/users/{uid}/accounts", "credAccount", "credAccount", []),
  op("apiKey_create", "POST", "/users/{uid}/apikeys", "apiKeyPair", "apiKeyPair", []),
  op("appliance_create", "POST", "/users/{uid}/appliances", "appliance", "appliance", []),
  op("machineImage_generate", "POST", "/users/{uid}/appliances/{aid}/images", "image", "image", []),
  op("machineImage_regenerate", "POST", "/users/{uid}/appliances/{aid}/images/{itid}", null, "image", ["force"]),
  op("applianceImage_publish", "POST", "/users/{uid}/appliances/{aid}/images/{itid}/pimages", "publishImage", "publishImage", []),
  op("applianceOSProfile_create", "POST", "/users/{uid}/appliances/{aid}/osprofile", "distribProfile", "distribProfile", []),
  op("machineImage_publish", "POST", "/users/{uid}/appliances/{aid}/pimages", "publishImage", "publishImage", []),
  op("mySoftware_create", "POST", "/users/{uid}/mysoftware", "mySoftware", "mySoftware", []),
  op("mySoftwareArtifact_add", "POST", "/users/{uid}/mysoftware/{msid}/artifacts", "softwareArtifact", "softwareArtifact", []),
  op("mySoftwareArtifact_upload", "POST", "/users/{uid}/mysoftware/{msid}/artifacts/{said}/bin/{fileName}", null, "softwareArtifact", []),
  op("osTemplate_delete", "DELETE", "/distributions/{id}/profiles/{prid}", null, null, []),
  op("cloudAccount_delete", "DELETE", "/users/{uid}/accounts/{caid}", null, null, []),
  op("apiKey_delete", "DELETE", "/users/{uid}/apikeys/{akid}", null, null, []),
  op("appliance_delete", "DELETE", "/users/{uid}/appliances/{aid}", null, null, ["force"]),
  op("machineImage_deleteAll", "DELETE", "/users/{uid}/appliances/{aid}/images", null, null, []),
  op("machineImage_delete", "DELETE", "/users/{uid}/appliances/{aid}/images/{itid}", null, null, []),
  op("machineImagePublished_delete", "DELETE", "/users/{uid}/appliances/{aid}/images/{itid}/pimages/{pitid}", null, null, []),
  op("machineImagePublish_cancel", "DELETE", "/users/{uid}/appliances/{aid}/images/{itid}/pimages/{pitid}/cancel", null, "status", []),
  op("machineImageGeneration_cancel", "DELETE", "/users/{uid}/appliances/{aid}/images/{itid}/status", null, "status", []),
  op("applianceOSProfile_delete", "DELETE", "/users/{uid}/appliances/{aid}/osprofile/{osid}", null, null, []),
  op("machineImagePublished_deleteAll", "DELETE", "/users/{uid}/appliances/{aid}/pimages", null, null, []),
  op("mySoftware_delete", "DELETE", "/users/{uid}/mysoftware/{msid}", null, null, []),
  op("mySoftwareArtifact_deleteAll", "DELETE", "/users/{uid}/mysoftware/{msid}/artifacts", null, null, []),
  op("mySoftwareArtifact_delete", "DELETE", "/users/{uid}/mysoftware/{msid}/artifacts/{said}", null, null, []),
  // Extensions (docs/server.md, "Extensions"): an image's SBOM, {format} one of SBOM_FORMATS' ids (model/sbom.ts).
  ext("machineImageSbom_download", "GET", "/users/{uid}/appliances/{aid}/images/{itid}/sbom/{format}", null, null, []),
] as const;

export type OperationId = (typeof operations)[number]['id'];
export type OperationById<Id extends OperationId> = Extract<(typeof operations)[number], { id: Id }>;

export const operationsById: Readonly<Record<OperationId, Operation>> = Object.fromEntries(
  operations.map((o) => [o.id, o]),
) as Record<OperationId, Operation>;

/** `{uid: string; aid: string}` from `/users/{uid}/appliances/{aid}`. */
export type PathParams<P extends string> = P extends `${string}{${infer Name}}${infer Rest}`
  ? { [K in Name | keyof PathParams<Rest>]: string }
  : {};

/** The names of a path's parameters, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/**
 * Fill a path template. Every value is percent-encoded as one path segment, so an id can never add
 * a segment or escape its place in the path.
 */
export function fillPath(path: string, params: Readonly<Record<string, string | number>>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === '') throw new TypeError(`missing path parameter "${name}" for ${path}`);
    return encodeURIComponent(String(v));
  });
}
