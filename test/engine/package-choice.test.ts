// One recipe for package resolution: the engine (a declaration's `pkgs`) and the provider
// (an Appliance's `packages`) ask the real reference server for the same names and must get the same
// packages. Each answer is also checked against the catalog record it names.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePackages } from '../../provider/runtime/appliance';
import type { Client } from '../../src/client';
import { fiql } from '../../src/fiql/builder';
import { parseDeclaration } from '../../src/engine/parse';
import { resolveDeclaration } from '../../src/engine/resolve';
import { startTestService, type TestService } from './helpers/service';

let svc: TestService;
let client: Client;
beforeAll(async () => {
  svc = await startTestService();
  client = svc.client();
});
afterAll(async () => svc?.close());

type Wanted = { name: string; version?: string; arch?: string };

async function engineUris(wanted: Wanted[]): Promise<string[]> {
  const pkgs = wanted.map((w) => `      - {${Object.entries(w).map(([k, v]) => `${k}: '${v}'`).join(', ')}}`).join('\n');
  const text = `stack:\n  name: same\n  version: '1'\n  os:\n    name: Debian\n    version: '12'\n    arch: x86_64\n    profile: Minimal\n    pkgs:\n${pkgs}\nbuilders:\n  - type: QCOW2\n`;
  const parsed = parseDeclaration(text, { file: 'same.yml', dir: '.', env: {} });
  expect(parsed.problems ?? []).toEqual([]);
  const resolved = await resolveDeclaration(client, parsed.declaration!);
  return resolved.packages.map((p) => p.uri);
}

describe('package resolution shared by the engine and the provider', () => {
  it('resolves the same names to the same packages', async () => {
    // A pinned version taken from the catalog itself, so that the test follows the data file.
    const libc = (await client.osPkg_getAll({ id: '1', params: { query: fiql.eq('name', 'libc6') } })).pkgs?.[0];
    expect(libc?.version).toBeTruthy();
    const wanted: Wanted[] = [
      { name: 'curl' }, { name: 'nginx' }, { name: 'tzdata' }, { name: 'bash', arch: 'amd64' }, { name: 'libc6', version: libc!.version! },
    ];
    const fromEngine = await engineUris(wanted);
    const fromProvider = await resolvePackages(client, 'distributions/1', wanted);
    expect(fromProvider).toEqual(fromEngine);
    expect(fromEngine).toHaveLength(wanted.length);
    for (const [i, uri] of fromEngine.entries()) {
      const p = await client.getByUri('package', uri);
      expect(p.name, uri).toBe(wanted[i]!.name);
      expect(['amd64', 'all']).toContain(p.arch);
      if (wanted[i]!.version) expect(p.version).toBe(wanted[i]!.version);
    }
  });

  it('finds a name only when it is exact: a FIQL wildcard names no package in either tool', async () => {
    await expect(resolvePackages(client, 'distributions/1', [{ name: 'nginx*' }])).rejects.toThrow(/package "nginx\*" is not in Debian 12 x86_64/);
    await expect(engineUris([{ name: 'nginx*' }])).rejects.toThrow(/package "nginx\*" not found/);
  });
});
