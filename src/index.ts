// The package's public surface: the client, its errors, the resource model and its codecs, the
// signer and the FIQL builder. The reference server and the declaration engine are heavier (SQLite,
// Fastify) and have their own entry points: `appliance-forge/server`, `appliance-forge/engine`.
export * from './client/index';
export { ForgeError, isForgeError, DecodeError, FiqlError, AbortedError, type ForgeErrorClass } from './errors';
export { ApiError, HttpError, TransportError, JobFailedError, JobCancelledError, WaitTimeoutError, ChecksumError } from './client/errors';
export { documents, rootAliases } from './model/resources';
export type {
  DocumentOf, DocumentRoot, User, CredAccount, Appliance, Distribution, DistribProfile, Pkg, Packages, MySoftware,
  SoftwareArtifact, Image, InstallProfile, TargetFormat, PublishImage, OpStatus, ServiceStatus, ApiKeyPair as ApiKeyPairRecord,
  Org, UForgeError, CredAccounts, Appliances, Distributions, DistribProfiles, MySoftwareList, SoftwareArtifacts, Images,
  TargetFormats, PublishImages, Statuses, ApiKeyPairs, Orgs, DocumentTypes,
} from './model/resources';
export { operations, operationsById, fillPath, pathParamNames } from './model/operations';
export type { Method, Operation, OperationId, OperationById, PathParams } from './model/operations';
export type { Infer, Model, AnyModel, Field, ScalarType } from './model/schema';
export { redact, secretsIn } from './model/redact';
export { encode, decode, decodeBody, formatOfAccept, formatOfContentType, MEDIA_TYPE, UFORGE_NS, XSI_NS } from './codec/index';
export type { Format, DecodedDocument } from './codec/index';
export { signTarget, signature, parseSignedTarget, verifySignature, basicAuthorization, parseBasicAuthorization } from './auth/signer';
export type { ApiKeyPair, SignedTarget } from './auth/signer';
export { fiql, quoteFiqlValue, parseFiql } from './fiql/index';
export type { FiqlNode } from './fiql/index';
