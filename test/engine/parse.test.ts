import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAccountRef } from '../../src/engine/declaration';
import { parseDeclaration, parseDeclarationFile } from '../../src/engine/parse';

const examples = path.resolve(__dirname, '../../examples');

function parseText(text: string, env: Record<string, string> = {}, dir = examples) {
  return parseDeclaration(text, { file: 'decl.yml', dir, env });
}

const osEnv = {
  OS_AUTH_URL: 'http://127.0.0.1:5000/v3', OPENSTACK_GLANCE_URL: 'http://127.0.0.1:9292',
  OS_USERNAME: 'admin', OS_PASSWORD: 'pw-very-secret', OS_USER_DOMAIN_NAME: 'Default', OS_PROJECT_NAME: 'admin',
};

describe('parseDeclaration', () => {
  it('reads the example declaration with its bundles, builders and env references', () => {
    const r = parseDeclarationFile(path.join(examples, 'appliance.yml'), { env: osEnv });
    expect(r.problems.filter((p) => p.severity === 'error')).toEqual([]);
    const d = r.declaration!;
    expect(d.stack.name).toBe('example-web');
    expect(d.stack.version).toBe('1.0');
    expect(d.stack.os).toMatchObject({ name: 'Debian', version: '13', arch: 'x86_64', profile: 'Minimal' });
    expect(d.stack.packages.map((p) => p.name)).toEqual(['curl', 'nginx']);
    expect(d.stack.bundles[0]!.files.map((f) => [f.name, f.rights, f.destination])).toEqual([
      ['index.html', '0644', '/var/www/example/'],
      ['default', '0644', '/etc/nginx/sites-enabled/'],
    ]);
    expect(d.builders.map((b) => b.type)).toEqual(['QCOW2', 'OpenStack QCOW2']);
    const pub = d.builders[1]!.publication!;
    expect(isAccountRef(pub.account)).toBe(false);
    expect(pub).toMatchObject({ displayName: 'example-web-1.0', keystoneDomain: 'Default', keystoneProject: 'admin' });
    // Only the values of fields the model marks secret are secrets: the password, not the domain or the project.
    expect(d.secrets).toEqual(['pw-very-secret']);
  });

  it('keeps a version written as a number as it was written', () => {
    const r = parseText('stack: {name: a, version: 1.0, os: {name: Debian, version: 12}}\nbuilders: [{type: QCOW2}]\n');
    expect(r.declaration?.stack.version).toBe('1.0');
    expect(r.declaration?.stack.os.version).toBe('12');
  });

  it('reads JSON with positions', () => {
    const json = JSON.stringify({ stack: { name: 'a', version: '1', os: { name: 'Debian' } }, builders: [{ type: 'QCOW2' }] }, null, 2);
    const r = parseText(json);
    expect(r.declaration).toBeUndefined();
    expect(r.problems).toEqual([
      expect.objectContaining({ line: 5, column: 11, message: 'stack.os.version is required', severity: 'error' }),
    ]);
  });

  it('reports every problem at once, each at its line and column', () => {
    const text = [
      'stack:', //                                   1
      '  version: "1"', //                           2
      '  os:', //                                    3
      '    name: Debian', //                         4
      '    version: "12"', //                        5
      '    pkgs:', //                                6
      '      - curl', //                             7
      '      - {version: "1"}', //                   8
      '  bundles:', //                               9
      '    - name: b', //                            10
      '      version: "1"', //                       11
      '      files:', //                             12
      '        - source: files/nope.txt', //         13
      '          rights: abc', //                    14
      'builders:', //                                15
      '  - type: QCOW2', //                          16
      '    hardwareSettings: {memory: -1}', //       17
      '  - type: OpenStack QCOW2', //                18
      '    account: {name: x}', //                   19
      '    keystoneProject: ${env:NOPE_PROJECT}', // 20
      '    flavour: big', //                         21
    ].join('\n');
    const r = parseText(text);
    expect(r.declaration).toBeUndefined();
    const got = r.problems.map((p) => `${p.line}:${p.column} ${p.severity} ${p.message}`);
    expect(got).toEqual([
      '2:3 error stack.name is required',
      '8:9 error stack.os.pkgs[].name is required',
      '13:19 error file not found: files/nope.txt (relative to the declaration)',
      '14:19 error stack.bundles[].files[].rights must be octal permissions such as 0644 or 755',
      '17:32 error builders[0].hardwareSettings.memory must be a whole number of at least 1',
      '19:5 error builders[1].displayName is required to publish',
      '20:22 error builders[1].keystoneProject: environment variable NOPE_PROJECT is not set',
      '21:5 warning unknown field "flavour" in builders[1] (ignored)',
    ]);
    expect(r.problems.every((p) => p.file === 'decl.yml')).toBe(true);
  });

  it('reports YAML syntax errors with positions', () => {
    const r = parseText('stack:\n  name: [a\nbuilders: []\n');
    expect(r.declaration).toBeUndefined();
    expect(r.problems.length).toBeGreaterThan(0);
    expect(r.problems[0]!.line).toBeGreaterThanOrEqual(2);
  });

  it('reports duplicate keys, names and a missing builders section', () => {
    const r = parseText('stack: {name: a, name: b, version: "1", os: {name: Debian, version: "12"}}\n');
    expect(r.problems.map((p) => p.message)).toEqual([expect.stringMatching(/unique/)]);
    const r2 = parseText('stack: {name: a, version: "1", os: {name: Debian, version: "12", pkgs: [curl, curl]}}\n');
    expect(r2.problems.map((p) => p.message)).toEqual(['builders is required: list at least one image format', 'package "curl" is listed twice']);
  });

  it('refers to an account of the service when no inline account has that name', () => {
    const r = parseText(
      'stack: {name: a, version: "1", os: {name: Debian, version: "12"}}\n' +
        'builders:\n  - {type: OpenStack QCOW2, account: {name: on-service}, displayName: d, keystoneProject: p}\n',
    );
    expect(r.problems).toEqual([]);
    const acc = r.declaration!.builders[0]!.publication!.account;
    expect(isAccountRef(acc) && acc.ref).toBe('on-service');
  });

  it('never puts a value read from the environment into a problem message', () => {
    const r = parseText(
      'stack: {name: a, version: "1", os: {name: Debian, version: "12"}}\nbuilders:\n  - type: QCOW2\n    hardwareSettings: {memory: "${env:MEM}"}\n',
      { MEM: 'sekr3t-value' },
    );
    expect(r.problems).toHaveLength(1);
    expect(JSON.stringify(r.problems)).not.toContain('sekr3t-value');
  });

  it('reads bundle sources relative to the declaration', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'af-parse-'));
    mkdirSync(path.join(dir, 'sub'));
    writeFileSync(path.join(dir, 'sub', 'x.txt'), 'x');
    const r = parseText(
      'stack:\n  name: a\n  version: "1"\n  os: {name: Debian, version: "12"}\n  bundles:\n    - name: b\n      version: "1"\n      files: [{source: sub/x.txt}]\nbuilders: [{type: QCOW2}]\n',
      {}, dir,
    );
    expect(r.problems).toEqual([]);
    expect(r.declaration!.stack.bundles[0]!.files[0]).toMatchObject({ name: 'x.txt', path: path.join(dir, 'sub', 'x.txt') });
  });
});
