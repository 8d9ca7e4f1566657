// The Appliance resource class (implementation: runtime/appliance.ts).
import * as pulumi from '@pulumi/pulumi';
import type { InstallationInput } from '../src/engine/installation';
import { registration, TYPE_MODULE, type CommonArgs, type OutputsOf } from './common';
import { providerFor } from './dynamic';
import { shapes } from './shapes';
import { Software } from './software';

export interface DistributionArgs {
  /** e.g. `Debian`. */
  name: pulumi.Input<string>;
  /** e.g. `12`. */
  version: pulumi.Input<string>;
  /** e.g. `x86_64`; needed only where a name and version exist for several architectures. */
  arch?: pulumi.Input<string>;
}

export interface PackageArgs { name: pulumi.Input<string>; version?: pulumi.Input<string>; arch?: pulumi.Input<string> }

export interface ApplianceArgs extends CommonArgs {
  name: pulumi.Input<string>;
  version: pulumi.Input<string>;
  description?: pulumi.Input<string>;
  /** By name/version/arch, or a URI `distributions/<id>`. Changing it replaces the appliance. */
  distribution: pulumi.Input<DistributionArgs | string>;
  /** Base OS profile name; default `Minimal`. */
  osProfile?: pulumi.Input<string>;
  /** Packages added to the OS profile: names, or {name, version?, arch?}; the latest version unless given. */
  packages?: pulumi.Input<pulumi.Input<string | PackageArgs>[]>;
  /** Software components: Software resources or their URIs. */
  software?: pulumi.Input<pulumi.Input<string>[]> | Array<Software | pulumi.Input<string>>;
  /**
   * The install profile, with the declaration's `installation` names (docs/cli-guide.md "stack.installation"). Stored as a
   * secret: it may hold passwords, which the service keeps only as hashes.
   */
  installation?: pulumi.Input<InstallationInput>;
  /** Organization URI `orgs/<id>`; default: the user's organization. */
  org?: pulumi.Input<string>;
}

export const applianceProvider = providerFor('appliance');

/** An appliance template. Packages, software and description change in place; the rest replaces it. */
export class Appliance extends pulumi.dynamic.Resource implements OutputsOf<'appliance'> {
  declare readonly name: pulumi.Output<string>;
  declare readonly version: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | undefined>;
  /** `users/<uid>/appliances/<id>`. */
  declare readonly uri: pulumi.Output<string>;
  /** Grows with every change of the template; images of an older revision are replaced. */
  declare readonly revision: pulumi.Output<number>;
  declare readonly distributionUri: pulumi.Output<string>;
  declare readonly osProfileUri: pulumi.Output<string>;
  /** The resolved URI of each entry of `packages`, in order. */
  declare readonly packageUris: pulumi.Output<string[]>;

  constructor(name: string, args: ApplianceArgs, opts?: pulumi.CustomResourceOptions) {
    const software = Array.isArray(args.software)
      ? args.software.map((s) => (s instanceof Software ? s.uri : s))
      : args.software;
    const [props, o] = registration('appliance', { ...args, software: software ?? [] }, opts);
    super(applianceProvider, name, props, o, TYPE_MODULE, shapes.appliance.type);
  }
}
