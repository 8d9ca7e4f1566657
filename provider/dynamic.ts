// The provider object that Pulumi serializes into state (`__provider`). It must stay tiny and capture
// nothing but a kind name and an empty holder: every method requires the stable runtime inside the call
// and delegates (design/pulumi-and-action.md, "The provider object is serialized into state"). Capturing an
// imported binding here would break loading in the host; capturing a credential would leak it into state.
import type * as pulumi from '@pulumi/pulumi';
import type * as runtime from './runtime/v1';

export type ResourceKind = 'software' | 'appliance' | 'machineImage' | 'publication' | 'cloudAccount';

type Runtime = typeof runtime;

export function providerFor(kind: ResourceKind): pulumi.dynamic.ResourceProvider<runtime.Props, runtime.Props> {
  // Stays empty: it is only the key under which the runtime keeps this provider's settings.
  const holder = {};
  return {
    async configure(req: pulumi.dynamic.ConfigureRequest): Promise<void> {
      (require('appliance-forge/pulumi/runtime/v1') as Runtime).configure(holder, req.config);
    },
    async check(olds: runtime.Props, news: runtime.Props) {
      return (require('appliance-forge/pulumi/runtime/v1') as Runtime).check(kind, olds, news, holder);
    },
    async diff(id: string, olds: runtime.Props, news: runtime.Props) {
      return (require('appliance-forge/pulumi/runtime/v1') as Runtime).diff(kind, id, olds, news);
    },
    async create(inputs: runtime.Props) {
      return (require('appliance-forge/pulumi/runtime/v1') as Runtime).create(kind, holder, inputs);
    },
    async read(id: string, props?: runtime.Props) {
      return (require('appliance-forge/pulumi/runtime/v1') as Runtime).read(kind, holder, id, props ?? {});
    },
    async update(id: string, olds: runtime.Props, news: runtime.Props) {
      return (require('appliance-forge/pulumi/runtime/v1') as Runtime).update(kind, holder, id, olds, news);
    },
    async delete(id: string, props: runtime.Props) {
      return (require('appliance-forge/pulumi/runtime/v1') as Runtime).remove(kind, holder, id, props);
    },
  };
}
