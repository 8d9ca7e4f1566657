// Unknown fields: always listed (also next to errors), a "did you mean" for near misses, errors in
// strict mode; the platform tool's keys this project does not support named as such; `${env:NAME}`
// names collected, and unset ones only warned about when the environment is optional (validate).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDeclaration } from '../../src/engine/parse';

const examples = path.resolve(__dirname, '../../examples');
const BASE = `stack:
  name: web
  versoin: '1.0'
  version: '1.0'
  config:
    - {name: setup.sh, source: files/index.html, type: bootscript}
  os: {name: Debian, version: '12'}
  bundles:
    - name: site
      version: '1'
      restrictionRule: 'Distribution#name=Debian'
      files:
        - {source: files/index.html, symlink: /tmp/x}
builders:
  - type: QCOW2
    compres: true
`;

const lines = (r: ReturnType<typeof parseDeclaration>) => r.problems.map((p) => `${p.line}:${p.column} ${p.severity} ${p.message}`);

describe('unknown and platform-only fields', () => {
  it('are warnings by default, with the key a typo meant', () => {
    const r = parseDeclaration(BASE, { file: 'd.yml', dir: examples, env: {} });
    expect(r.declaration).toBeDefined();
    expect(lines(r)).toEqual([
      '3:3 warning unknown field "versoin" in stack (ignored); did you mean "version"?',
      '5:3 warning field "config" in stack is a key of the platform tool\'s format that appliance-forge does not support (configuration scripts): ignored',
      '11:7 warning field "restrictionRule" in stack.bundles[] is a key of the platform tool\'s format that appliance-forge does not support (OS restriction rules): ignored',
      '13:38 warning field "symlink" in stack.bundles[].files[] is a key of the platform tool\'s format that appliance-forge does not support (symbolic links): ignored',
      '16:5 warning unknown field "compres" in builders[0] (ignored); did you mean "compress"?',
    ]);
  });

  it('are errors in strict mode', () => {
    const r = parseDeclaration(BASE, { file: 'd.yml', dir: examples, env: {}, strict: true });
    expect(r.declaration).toBeUndefined();
    expect(r.problems.map((p) => p.severity)).toEqual(['error', 'error', 'error', 'error', 'error']);
    expect(r.problems[0]!.message).toBe('unknown field "versoin" in stack; did you mean "version"?');
  });

  it('stay listed next to an error, and a far-off key gets no suggestion', () => {
    const r = parseDeclaration(BASE.replace("  version: '1.0'\n", '').replace('compres', 'flavour'), { file: 'd.yml', dir: examples, env: {} });
    expect(r.declaration).toBeUndefined();
    expect(lines(r)).toContain('2:3 error stack.version is required');
    expect(lines(r)).toContain('3:3 warning unknown field "versoin" in stack (ignored); did you mean "version"?');
    expect(lines(r).find((l) => l.includes('flavour'))).toBe('15:5 warning unknown field "flavour" in builders[0] (ignored)');
  });

  it('collects the ${env:NAME} names; unset ones are errors, or warnings when the environment is optional', () => {
    const text = BASE.replace("name: web", 'name: ${env:APP_NAME}').replace("type: QCOW2", 'type: ${env:FORMAT}');
    const strictEnv = parseDeclaration(text, { file: 'd.yml', dir: examples, env: { FORMAT: 'QCOW2' } });
    expect(strictEnv.envNames).toEqual(['APP_NAME', 'FORMAT']);
    expect(lines(strictEnv)).toContain('2:9 error stack.name: environment variable APP_NAME is not set');
    const optional = parseDeclaration(text, { file: 'd.yml', dir: examples, env: {}, envOptional: true });
    expect(optional.problems.filter((p) => p.severity === 'error')).toEqual([]);
    expect(lines(optional)).toContain('2:9 warning stack.name: environment variable APP_NAME is not set (plan and apply will need it)');
    expect(lines(optional)).toContain('15:11 warning builders[0].type: environment variable FORMAT is not set (plan and apply will need it)');
  });
});
