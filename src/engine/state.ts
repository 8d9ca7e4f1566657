// What the engine knows before it plans: the declaration resolved against the service's catalog
// (Resolved) and what the service already holds for it (Observed). Both are plain data, so that
// planning is a pure function that unit tests can drive without a server.
import type { Appliance, DistribProfile, Image, MySoftware, PublishImage, SoftwareArtifact, TargetFormat } from '../model/resources';
import type { AccountDecl, PackageDecl } from './declaration';

export interface ResolvedPackage {
  readonly decl: PackageDecl;
  readonly uri: string;
  /** `name version arch`, for messages. */
  readonly label: string;
}

/** The account a publication embeds (wire contract §9). From the service, the password is not known. */
export interface ResolvedAccount {
  readonly name: string;
  readonly keystoneUrl: string;
  readonly glanceUrl?: string | undefined;
  readonly login: string;
  readonly password?: string | undefined;
  /** Set when the account is one stored on the service. */
  readonly uri?: string | undefined;
  readonly decl?: AccountDecl | undefined;
}

export interface Resolved {
  readonly distribution: { readonly uri: string; readonly id: string; readonly label: string };
  readonly profile: { readonly uri: string; readonly name: string; readonly pkgUris: ReadonlySet<string> };
  readonly packages: readonly ResolvedPackage[];
  /** Target format of each builder, by builder index. */
  readonly formats: ReadonlyMap<number, TargetFormat>;
  /** Account of each publishing builder, by builder index. */
  readonly accounts: ReadonlyMap<number, ResolvedAccount>;
}

export interface ObservedSoftware {
  readonly record: MySoftware;
  readonly artifacts: readonly SoftwareArtifact[];
}

export interface Observed {
  readonly appliance?: Appliance | undefined;
  readonly osProfile?: DistribProfile | undefined;
  /** Package URIs of the appliance's OS profile. */
  readonly profilePkgUris: readonly string[];
  /** Software components found by name and version, by bundle name. */
  readonly software: ReadonlyMap<string, ObservedSoftware>;
  readonly images: readonly Image[];
  readonly publications: readonly PublishImage[];
}

/** Content of a bundle file on disk. */
export interface LocalFile {
  readonly sha256: string;
  readonly size: number;
}
