// The JSON Schema editors read (schema/declaration.schema.json, for yaml-language-server) is the
// declaration format the parser reads through (src/engine/declaration-format.ts): the committed file
// is what that description makes now, the package ships and exports it, every example declaration
// passes it (checked with ajv), and declarations the parser refuses are refused by the schema too.
import Ajv from 'ajv';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { DECLARATION_SCHEMA_FILE, declarationSchemaText, schemaPattern } from '../../src/engine/declaration-schema';
import { parseDeclaration } from '../../src/engine/parse';

const root = path.resolve(__dirname, '../..');
const schemaFile = path.join(root, DECLARATION_SCHEMA_FILE);
const committed = existsSync(schemaFile) ? readFileSync(schemaFile, 'utf8') : '';
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[]; exports: Record<string, string> };

let validate: ReturnType<Ajv['compile']> | undefined;
function schemaCheck(doc: unknown): string[] {
  // strict: an unknown keyword or a keyword on the wrong type is an error in the schema itself.
  validate ??= new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(committed) as object);
  return validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`);
}

function parserErrors(text: string, strict = false): string[] {
  const r = parseDeclaration(text, { file: 'd.yml', dir: root, env: {}, envOptional: true, strict });
  return r.problems.filter((p) => p.severity === 'error').map((p) => p.message);
}

describe('schema/declaration.schema.json', () => {
  it('is what the declaration format makes now (npm run build writes it)', () => {
    expect(committed).toBe(declarationSchemaText());
  });

  it('is in the package: files and exports', () => {
    expect(pkg.files).toContain('schema/');
    expect(pkg.exports['./schema/declaration.schema.json']).toBe(`./${DECLARATION_SCHEMA_FILE}`);
  });

  it('passes every example declaration, which name it for yaml-language-server', () => {
    const files = readdirSync(path.join(root, 'examples')).filter((f) => f.endsWith('.yml'));
    const declarations = files.filter((f) => !('jobs' in (parse(readFileSync(path.join(root, 'examples', f), 'utf8')) as object)));
    expect(declarations.sort()).toEqual(['appliance.yml', 'local.yml', 'matrix.yml']);
    for (const f of declarations) {
      const text = readFileSync(path.join(root, 'examples', f), 'utf8');
      expect(schemaCheck(parse(text)), f).toEqual([]);
      expect(parseDeclaration(text, { file: f, dir: path.join(root, 'examples'), env: {}, envOptional: true, strict: true }).problems.filter((p) => p.severity === 'error'), f).toEqual([]);
      const modeline = /^# yaml-language-server: \$schema=(\S+)$/m.exec(text)?.[1];
      expect(modeline && path.resolve(root, 'examples', modeline), f).toBe(schemaFile);
    }
  });

  // A valid declaration, then one change each: the parser (strict, as editors show every unknown key)
  // and the schema refuse every one.
  const base = {
    stack: { name: 'web', version: '1.0', os: { name: 'Debian', version: '12', pkgs: ['curl', { name: 'nginx' }] }, installation: { diskSize: 2048, users: [{ name: 'ops', secondaryGroups: 'adm,sudo' }] } },
    builders: [{ type: 'QCOW2', hardwareSettings: { memory: '${env:MEM}' } }, { type: 'OpenStack QCOW2', account: { name: 'lab' }, displayName: 'web', keystoneProject: 'demo', publicImage: 'false' }],
    accounts: [{ type: 'openstack', name: 'lab', keystoneUrl: 'https://keystone:5000/v3', login: '${env:OS_USERNAME}', password: '${env:OS_PASSWORD}' }],
  };
  type Doc = typeof base & Record<string, unknown>;
  const bad: ReadonlyArray<[string, (d: Doc) => unknown]> = [
    ['no builders', (d) => ({ stack: d.stack })],
    ['an empty builders list', (d) => ({ ...d, builders: [] })],
    ['no stack.os', (d) => ({ ...d, stack: { name: 'web', version: '1.0' } })],
    ['an empty stack.name', (d) => ({ ...d, stack: { ...d.stack, name: ' ' } })],
    ['a builder without type', (d) => ({ ...d, builders: [{ compress: true }] })],
    ['diskSize 0', (d) => ({ ...d, stack: { ...d.stack, installation: { diskSize: 0 } } })],
    ['memory as words', (d) => ({ ...d, builders: [{ type: 'QCOW2', hardwareSettings: { memory: 'lots' } }] })],
    ['publicImage yes', (d) => ({ ...d, builders: [{ ...d.builders[1], publicImage: 'yes' }] })],
    ['a publication without displayName', (d) => ({ ...d, builders: [{ type: 'VHD', account: { name: 'lab' }, keystoneProject: 'demo' }] })],
    ['a displayName without account', (d) => ({ ...d, builders: [{ type: 'VHD', displayName: 'web' }] })],
    ['an AWS account', (d) => ({ ...d, accounts: [{ ...d.accounts[0], type: 'AWS' }] })],
    ['an ftp Keystone URL', (d) => ({ ...d, accounts: [{ ...d.accounts[0], keystoneUrl: 'ftp://keystone/v3' }] })],
    ['keystoneVersion v2', (d) => ({ ...d, accounts: [{ ...d.accounts[0], keystoneVersion: 'v2' }] })],
    ['an account without password', (d) => ({ ...d, accounts: [{ type: 'OpenStack', name: 'lab', keystoneUrl: 'https://k/v3', login: 'u' }] })],
    ['rights 999', (d) => ({ ...d, stack: { ...d.stack, bundles: [{ name: 'b', version: '1', files: [{ source: 'README.md', rights: '999' }] }] } })],
    ['a bundle without files', (d) => ({ ...d, stack: { ...d.stack, bundles: [{ name: 'b', version: '1' }] } })],
    ['an installation key the build does not set', (d) => ({ ...d, stack: { ...d.stack, installation: { partitioning: 'lvm' } } })],
    ['a builder installation beyond diskSize', (d) => ({ ...d, builders: [{ type: 'QCOW2', installation: { swapSize: 1 } }] })],
    ['a typo in a builder key', (d) => ({ ...d, builders: [{ type: 'QCOW2', versoin: 2 }] })],
    ['a list as the declaration', () => ['stack']],
    ['a user id below 0', (d) => ({ ...d, stack: { ...d.stack, installation: { users: [{ name: 'x', userId: -1 }] } } })],
  ];

  it('and the parser accept the base declaration of the refusals below', () => {
    expect(schemaCheck(base)).toEqual([]);
    expect(parserErrors(stringify(base), true)).toEqual([]);
  });

  it.each(bad)('and the parser refuse %s', (_, change) => {
    const doc = change(structuredClone(base));
    expect(schemaCheck(doc)).not.toEqual([]);
    expect(parserErrors(stringify(doc), true)).not.toEqual([]);
  });

  it("gives the parser the format's defaults, also for a value it cannot read yet (an unset variable under validate)", () => {
    const doc = { ...base, stack: { ...base.stack, os: { ...base.stack.os, arch: '${env:AF_UNSET_ARCH}' } }, builders: [{ ...base.builders[1], keystoneDomain: '${env:AF_UNSET_DOMAIN}' }] };
    const r = parseDeclaration(stringify(doc), { file: 'd.yml', dir: root, env: {}, envOptional: true });
    expect(r.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(r.declaration?.stack.os).toMatchObject({ arch: 'x86_64', profile: 'Minimal' });
    expect(r.declaration?.builders[0]).toMatchObject({ compress: false, publication: { keystoneDomain: 'Default', publicImage: false } });
  });

  it("spells a case-insensitive check out for JSON Schema's flagless patterns", () => {
    expect(schemaPattern(/^https?:\/\/[^\s/?#]+$/i)).toBe('^[hH][tT][tT][pP][sS]?:\\/\\/[^\\s/?#]+$');
    expect(new RegExp(schemaPattern(/^openstack$/i)).test('OpenStack')).toBe(true);
    expect(() => schemaPattern(/[a-z]/i)).toThrow(/a letter in a class/);
  });
});
