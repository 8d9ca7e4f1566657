// The CloudAccount resource class (implementation: runtime/cloud-account.ts).
import * as pulumi from '@pulumi/pulumi';
import type { OpenStackAccountInput } from '../src/engine/publication-body';
import { registration, TYPE_MODULE, type CommonArgs, type OutputsOf, type PulumiInputs } from './common';
import { providerFor } from './dynamic';
import { shapes } from './shapes';

/** An OpenStack account (Keystone v3 and Glance v2): the model's fields (src/model/resources.ts). */
export type OpenStackAccountArgs = PulumiInputs<Omit<OpenStackAccountInput, 'name' | 'uri'>>;

export interface CloudAccountArgs extends CommonArgs, OpenStackAccountArgs {
  name: pulumi.Input<string>;
}

export const cloudAccountProvider = providerFor('cloudAccount');

/** A cloud account kept by the service, to share one account between publications. */
export class CloudAccount extends pulumi.dynamic.Resource implements OutputsOf<'cloudAccount'> {
  declare readonly name: pulumi.Output<string>;
  declare readonly keystoneUrl: pulumi.Output<string>;
  declare readonly glanceUrl: pulumi.Output<string | undefined>;
  declare readonly login: pulumi.Output<string>;
  declare readonly password: pulumi.Output<string>;
  declare readonly keystoneVersion: pulumi.Output<string>;
  /** `users/<uid>/accounts/<id>`. */
  declare readonly uri: pulumi.Output<string>;

  constructor(name: string, args: CloudAccountArgs, opts?: pulumi.CustomResourceOptions) {
    const [props, o] = registration('cloudAccount', args, opts);
    super(cloudAccountProvider, name, props, o, TYPE_MODULE, shapes.cloudAccount.type);
  }
}
