// What an editor shows for the client's methods: the TypeScript compiler (the language service's checker)
// reads a small program that imports the package's public entry and names the type each operation resolves
// with. It is the resource's name (`Promise<Appliance>`, and `Appliance[]` for a list's records), never the
// mapped type the model infers (`InferFields<{ readonly uuid: ScalarField<string> … }>`).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'af-named-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The operations looked at, and the type each resolves with as the checker prints it. */
const EXPECTED: Readonly<Record<string, string>> = {
  appliance_get: 'Promise<Appliance>',
  appliance_getAll: 'Promise<Appliances>',
  appliance_update: 'Promise<Appliance>',
  os_get: 'Promise<Distribution>',
  machineImage_get: 'Promise<Image>',
  machineImageStatus_getAll: 'Promise<Statuses>',
  user_get: 'Promise<User>',
  uforgeStatus_get: 'Promise<ServiceStatus>',
};

/** `typeToString` of the return type of `client.<id>`, for each id, in a program that imports src/index.ts. */
function returnTypes(ids: readonly string[]): Record<string, string> {
  const file = path.join(dir, 'hover.ts');
  const entry = path.join(root, 'src/index');
  writeFileSync(file, [
    `import type { Client } from ${JSON.stringify(entry)};`,
    'declare const client: Client;',
    ...ids.map((id) => `export const ${id} = client.${id};`),
    'export const appliances = async () => (await client.appliance_getAll()).appliances;',
    'export const imageStatus = async () => (await client.machineImage_get({ aid: 1, itid: 2 })).status;',
  ].join('\n'));
  const config = ts.readConfigFile(path.join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  // Type-checked only; the temporary file lies outside the project's rootDir.
  const checkOnly: ts.CompilerOptions = { ...options, noEmit: true };
  delete checkOnly.rootDir;
  const program = ts.createProgram([file], checkOnly);
  const diagnostics = ts.getPreEmitDiagnostics(program, program.getSourceFile(file));
  expect(diagnostics.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const out: Record<string, string> = {};
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement) || !statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    const decl = statement.declarationList.declarations[0]!;
    const type = checker.getTypeAtLocation(decl.name);
    const [signature] = checker.getSignaturesOfType(type, ts.SignatureKind.Call);
    out[decl.name.getText(source)] = signature ? checker.typeToString(checker.getReturnTypeOfSignature(signature)) : '(not callable)';
  }
  return out;
}

/** Expressions (of `client`) and the type each has, records inside records included. */
const NESTED: Readonly<Record<string, string>> = {
  appliances: 'Promise<Appliance[] | undefined>',
  imageStatus: 'Promise<OpStatus | undefined>',
};

describe('the client as an editor shows it', () => {
  it('names the resource each operation resolves with, not the inferred mapped type', () => {
    const types = returnTypes(Object.keys(EXPECTED));
    expect(types).toEqual({ ...EXPECTED, ...NESTED });
    for (const [id, text] of Object.entries(types)) expect(text, id).not.toMatch(/InferFields<|ScalarField<|Infer</);
  }, 120_000);
});
