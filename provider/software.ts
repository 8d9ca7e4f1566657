// The Software resource class (implementation: runtime/software.ts).
import * as pulumi from '@pulumi/pulumi';
import { registration, TYPE_MODULE, type CommonArgs, type OutputsOf } from './common';
import { providerFor } from './dynamic';
import { shapes } from './shapes';

export interface SoftwareFileArgs {
  /** Local path, relative to the project folder; its content hash decides whether it is uploaded again. */
  source: pulumi.Input<string>;
  /** Absolute install location in the image. */
  destination?: pulumi.Input<string>;
  /** Octal permissions, e.g. `0755`. */
  rights?: pulumi.Input<string>;
  /** `owner:group`. */
  ownerGroup?: pulumi.Input<string>;
}

export interface SoftwareArgs extends CommonArgs {
  name: pulumi.Input<string>;
  version: pulumi.Input<string>;
  description?: pulumi.Input<string>;
  files?: pulumi.Input<pulumi.Input<SoftwareFileArgs>[]>;
}

import type { SoftwareFileState } from './runtime/software';

export type { SoftwareFileState };

export const softwareProvider = providerFor('software');

/** A component of the user's software library with its uploaded files (name/version change replaces). */
export class Software extends pulumi.dynamic.Resource implements OutputsOf<'software'> {
  declare readonly name: pulumi.Output<string>;
  declare readonly version: pulumi.Output<string>;
  declare readonly description: pulumi.Output<string | undefined>;
  declare readonly files: pulumi.Output<SoftwareFileState[]>;
  /** `users/<uid>/mysoftware/<id>`: give it to an Appliance's `software`. */
  declare readonly uri: pulumi.Output<string>;
  /** One artifact URI per file, in the order of `files`. */
  declare readonly artifactUris: pulumi.Output<string[]>;

  constructor(name: string, args: SoftwareArgs, opts?: pulumi.CustomResourceOptions) {
    const [props, o] = registration('software', { ...args, files: args.files ?? [] }, opts);
    super(softwareProvider, name, props, o, TYPE_MODULE, shapes.software.type);
  }
}
