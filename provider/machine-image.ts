// The MachineImage resource class (implementation: runtime/machine-image.ts).
import * as pulumi from '@pulumi/pulumi';
import { Appliance } from './appliance';
import { registration, TYPE_MODULE, type CommonArgs, type OutputsOf } from './common';
import { providerFor } from './dynamic';
import type { SbomFormat } from '../src/model/sbom';
import { shapes } from './shapes';

export interface MachineImageArgs extends CommonArgs {
  /** The Appliance resource (its revision is then followed), or an appliance URI. */
  appliance: Appliance | pulumi.Input<string>;
  /** With an appliance URI: the revision to follow; a change replaces the image. */
  applianceRevision?: pulumi.Input<number>;
  /** Target format name, e.g. `QCOW2`, `OpenStack QCOW2`. */
  format: pulumi.Input<string>;
  compress?: pulumi.Input<boolean>;
  /** MiB; default 1024. */
  memorySize?: pulumi.Input<number>;
  /** MiB; default 2048. */
  diskSize?: pulumi.Input<number>;
  /** Seconds to wait for the generation; default 3600. A change does not replace the image. */
  timeout?: pulumi.Input<number>;
}

export const machineImageProvider = providerFor('machineImage');

/** A generated machine image. Any change of what shapes it, or of the appliance's revision, replaces it. */
export class MachineImage extends pulumi.dynamic.Resource implements OutputsOf<'machineImage'> {
  declare readonly appliance: pulumi.Output<string>;
  declare readonly format: pulumi.Output<string>;
  /** `users/<uid>/appliances/<id>/images/<id>`. */
  declare readonly uri: pulumi.Output<string>;
  declare readonly sha256: pulumi.Output<string>;
  declare readonly fileSize: pulumi.Output<number>;
  declare readonly downloadUri: pulumi.Output<string>;
  declare readonly fileName: pulumi.Output<string>;
  /** The image's SBOMs on the reference server (relative URIs, like `downloadUri`): `{spdx, cyclonedx}`. */
  declare readonly sbomUris: pulumi.Output<Readonly<Record<SbomFormat, string>>>;
  /** `downloadUri` under the service's base URL (`https://host/api/users/…/downloads/…`): what to export; fetching it needs the user's credentials. */
  declare readonly downloadUrl: pulumi.Output<string>;
  /** `sbomUris` under the service's base URL. */
  declare readonly sbomUrls: pulumi.Output<Readonly<Record<SbomFormat, string>>>;

  constructor(name: string, args: MachineImageArgs, opts?: pulumi.CustomResourceOptions) {
    const app = args.appliance;
    const props = {
      ...args,
      appliance: app instanceof Appliance ? app.uri : app,
      applianceRevision: app instanceof Appliance ? app.revision : args.applianceRevision,
    };
    super(machineImageProvider, name, ...registration('machineImage', props, opts), TYPE_MODULE, shapes.machineImage.type);
  }
}
