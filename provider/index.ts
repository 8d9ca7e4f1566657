// `appliance-forge/pulumi`: Pulumi resources for the Appliance Template and Machine Image Service.
// Each is a dynamic resource whose serialized provider only requires `appliance-forge/pulumi/runtime/v1`.
// The first statement checks the Node version (node-floor.ts) before anything else loads.
import { exitIfNodeTooOld } from '../src/node-floor';

exitIfNodeTooOld();

export { Software, softwareProvider, type SoftwareArgs, type SoftwareFileArgs, type SoftwareFileState } from './software';
export { Appliance, applianceProvider, type ApplianceArgs, type DistributionArgs, type PackageArgs } from './appliance';
export { MachineImage, machineImageProvider, type MachineImageArgs } from './machine-image';
export { Publication, publicationProvider, type PublicationArgs } from './publication';
export { CloudAccount, cloudAccountProvider, type CloudAccountArgs, type OpenStackAccountArgs } from './cloud-account';
export { type ConnectionArgs, type CommonArgs } from './common';
export { providerFor, type ResourceKind } from './dynamic';
