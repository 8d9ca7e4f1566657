// The CloudAccount resource class (implementation: runtime/cloud-account.ts).
import * as pulumi from '@pulumi/pulumi';
import { secretInputs, TYPE_MODULE, type CommonArgs } from './common';
import { providerFor } from './dynamic';

/** An OpenStack account: Keystone v3 and Glance v2. */
export interface OpenStackAccountArgs {
  /** e.g. `http://keystone:5000/v3` (with or without the version segment). */
  keystoneUrl: pulumi.Input<string>;
  /** e.g. `http://glance:9292`; default: from the Keystone catalog. */
  glanceUrl?: pulumi.Input<string>;
  login: pulumi.Input<string>;
  /** Stored as a secret. */
  password: pulumi.Input<string>;
  /** `v3` (the default) is the only one supported. */
  keystoneVersion?: pulumi.Input<string>;
}

export interface CloudAccountArgs extends CommonArgs, OpenStackAccountArgs {
  name: pulumi.Input<string>;
}

export const cloudAccountProvider = providerFor('cloudAccount');

/** A cloud account kept by the service, to share one account between publications. */
export class CloudAccount extends pulumi.dynamic.Resource {
  declare readonly name: pulumi.Output<string>;
  declare readonly keystoneUrl: pulumi.Output<string>;
  declare readonly glanceUrl: pulumi.Output<string | undefined>;
  declare readonly login: pulumi.Output<string>;
  declare readonly password: pulumi.Output<string>;
  declare readonly keystoneVersion: pulumi.Output<string>;
  /** `users/<uid>/accounts/<id>`. */
  declare readonly uri: pulumi.Output<string>;

  constructor(name: string, args: CloudAccountArgs, opts?: pulumi.CustomResourceOptions) {
    const [props, o] = secretInputs({ ...args, uri: undefined }, ['password', 'connection'], opts);
    super(cloudAccountProvider, name, props, o, TYPE_MODULE, 'CloudAccount');
  }
}
