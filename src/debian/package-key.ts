// The key of a package in a merged index and in the server's catalog: its name and architecture. A module
// of its own so that the catalog's start (server/catalog/start-index.ts) does not load the index readers
// (suites, stanzas, their gzip and child processes) for it.

export const packageKey = (name: string, arch: string): string => `${name}\t${arch}`;
