// The Publication resource class (implementation: runtime/publication.ts).
import * as pulumi from '@pulumi/pulumi';
import { OPENSTACK_ACCOUNT_FIELDS } from '../src/model/resources';
import { CloudAccount, type OpenStackAccountArgs } from './cloud-account';
import { registration, TYPE_MODULE, type CommonArgs, type OutputsOf } from './common';
import { providerFor } from './dynamic';
import { shapes } from './shapes';
import { MachineImage } from './machine-image';

export interface PublicationArgs extends CommonArgs {
  /** The MachineImage resource or an image URI; its format must be publishable (an `OpenStack …` format). */
  image: MachineImage | pulumi.Input<string>;
  /** Appliance URI; default: the image's appliance. */
  appliance?: pulumi.Input<string>;
  /** The OpenStack account: its fields, or a CloudAccount resource. Stored as a secret. */
  account: CloudAccount | pulumi.Input<OpenStackAccountArgs>;
  /** Default `Default`. */
  keystoneDomain?: pulumi.Input<string>;
  keystoneProject: pulumi.Input<string>;
  displayName: pulumi.Input<string>;
  publicImage?: pulumi.Input<boolean>;
  /** Seconds to wait for the publication; default 3600. A change does not replace it. */
  timeout?: pulumi.Input<number>;
}

export const publicationProvider = providerFor('publication');

/** An image published to OpenStack Glance; `cloudId` is the Glance image id. Deleting it removes it. */
export class Publication extends pulumi.dynamic.Resource implements OutputsOf<'publication'> {
  declare readonly image: pulumi.Output<string>;
  declare readonly displayName: pulumi.Output<string>;
  /** `users/<uid>/appliances/<id>/images/<id>/pimages/<id>`. */
  declare readonly uri: pulumi.Output<string>;
  /** The image's id in the target cloud. */
  declare readonly cloudId: pulumi.Output<string>;

  constructor(name: string, args: PublicationArgs, opts?: pulumi.CustomResourceOptions) {
    const acc = args.account;
    // A CloudAccount gives its outputs of the account's fields (the model's list).
    const account = acc instanceof CloudAccount ? Object.fromEntries(OPENSTACK_ACCOUNT_FIELDS.map((k) => [k, acc[k]])) : acc;
    const [props, o] = registration('publication', { ...args, image: args.image instanceof MachineImage ? args.image.uri : args.image, account }, opts);
    super(publicationProvider, name, props, o, TYPE_MODULE, shapes.publication.type);
  }
}
