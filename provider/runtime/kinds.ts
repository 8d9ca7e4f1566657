// The resource kinds by the names their serialized providers pass (part of the runtime's stable surface).
import { appliance } from './appliance';
import { cloudAccount } from './cloud-account';
import type { ResourceKind } from '../shapes';
import type { CommonInputs, Handler } from './handler';
import { machineImage } from './machine-image';
import { publication } from './publication';
import { software } from './software';

export const handlers = { software, appliance, machineImage, publication, cloudAccount } as const satisfies Record<ResourceKind, Handler<CommonInputs>>;
