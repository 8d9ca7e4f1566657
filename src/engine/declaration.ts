// The declaration as the engine understands it, after parsing and validation: the platform tool's
// (hammr) format, `stack` / `builders` / `accounts` (docs/design/declaration.md). Each part keeps
// the position it was written at, so that problems found later (when resolving against the
// service) still point at the right line.
import type { OpenStackAccountFields } from '../model/resources';
import type { InstallationDecl } from './installation';
import type { Position } from './problems';

export interface PackageDecl {
  readonly name: string;
  readonly version?: string | undefined;
  readonly release?: string | undefined;
  readonly arch?: string | undefined;
  readonly at: Position;
}

export interface BundleFileDecl {
  readonly name: string;
  /** As written in the file (relative to the declaration). */
  readonly source: string;
  /** Real path on disk (links resolved), inside the declaration's folder unless allowed (bundle-source.ts). */
  readonly path: string;
  readonly destination?: string | undefined;
  readonly rights?: string | undefined;
  readonly ownerGroup?: string | undefined;
  readonly at: Position;
}

export interface BundleDecl {
  readonly name: string;
  readonly version: string;
  readonly description?: string | undefined;
  readonly files: readonly BundleFileDecl[];
  readonly at: Position;
}

/** An OpenStack account, inline or from `accounts` (wire contract §9). */
export interface AccountDecl
  extends Readonly<Required<Pick<OpenStackAccountFields, 'keystoneUrl' | 'login' | 'password'>> & Pick<OpenStackAccountFields, 'glanceUrl'>> {
  readonly name: string;
  readonly type: 'OpenStack';
  readonly keystoneVersion: 'v3';
  readonly at: Position;
}

/** `account: {name}` that names neither an inline account nor an `accounts` entry: looked up on the service. */
export interface AccountRef {
  readonly ref: string;
  readonly at: Position;
}

export interface PublicationDecl {
  readonly account: AccountDecl | AccountRef;
  readonly displayName: string;
  readonly keystoneDomain: string;
  readonly keystoneProject: string;
  readonly publicImage: boolean;
  readonly at: Position;
}

/** Image install profile, in MiB (the platform tool's MB, wire contract §8). */
export interface InstallProfileDecl {
  readonly diskSize?: number | undefined;
  readonly memorySize?: number | undefined;
}

export interface BuilderDecl {
  readonly index: number;
  /** Target format display name, e.g. `OpenStack QCOW2`. */
  readonly type: string;
  readonly typeAt: Position;
  readonly installProfile: InstallProfileDecl;
  readonly compress: boolean;
  readonly publication?: PublicationDecl | undefined;
  readonly at: Position;
}

export interface StackDecl {
  readonly name: string;
  readonly version: string;
  readonly description?: string | undefined;
  readonly os: {
    readonly name: string;
    readonly version: string;
    readonly arch: string;
    readonly profile: string;
    readonly at: Position;
    readonly profileAt: Position;
  };
  readonly packages: readonly PackageDecl[];
  /** Appliance-level install settings (`stack.installation`). */
  readonly installation: InstallationDecl;
  readonly bundles: readonly BundleDecl[];
  readonly at: Position;
}

export interface Declaration {
  /** The file as the user named it (used in problems and annotations). */
  readonly file: string;
  /** Folder that bundle sources are relative to. */
  readonly dir: string;
  readonly stack: StackDecl;
  readonly builders: readonly BuilderDecl[];
  /** The values of the fields the model marks secret (passwords), written in the file or read from `${env:…}`. */
  readonly secrets: readonly string[];
}

export function isAccountRef(a: AccountDecl | AccountRef): a is AccountRef {
  return 'ref' in a;
}
