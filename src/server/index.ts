// The embedded reference server (package export `appliance-forge/server`).
export { startServer, createUser, type StartOptions, type RunningServer } from './start';
export { buildServer, type BuiltServer } from './app';
export type { ServerDeps } from './context';
export type { Limits } from '../model/limits';
export type { CatalogPort, ImagingPort, OpenStackPort, Clock, TargetFormatSpec } from './ports';
export type { CreatedUser } from './auth/keys';
export { JobRunner } from './jobs/runner';
export { ServiceError } from './service-error';
export { DataFolderError } from './data-folder';
