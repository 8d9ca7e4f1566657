// The embedded reference server (package export `appliance-forge/server`). Its first statement checks the
// Node version (node-floor.ts) before anything of the server loads.
import { exitIfNodeTooOld } from '../node-floor';

exitIfNodeTooOld();

export { startServer, startWorker, createUser, type StartOptions, type NodeOptions, type RunningServer, type RunningWorker } from './start';
export { SERVER_ROLES, topologyProblem, type ServerRole } from './backends';
export { ServerConfigError } from './config-error';
export { migrateDataFolder, type MigrateOptions, type MigrateResult } from './migrate';
export { buildServer, type BuiltServer } from './app';
export type { ServerDeps } from './context';
export type { Limits } from '../model/limits';
export type { CatalogPort, ImagingPort, OpenStackPort, Clock, TargetFormatSpec } from './ports';
export type { CreatedUser } from './auth/keys';
export { JobRunner } from './jobs/runner';
export type { JobQueue } from './queue/port';
export { ServiceError } from './service-error';
export { DataFolderError } from './data-folder';
