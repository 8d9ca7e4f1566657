// The validators of the SBOM tests: CycloneDX 1.6 against the official schemas that
// @cyclonedx/cyclonedx-library ships, SPDX 2.3 against the rules of its specification written out below
// (no package of the npm or Debian registries ships the official spdx-schema.json).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv, { type AnySchema } from 'ajv';
import addFormats from 'ajv-formats';

const CDX_SCHEMAS = join(__dirname, '../../node_modules/@cyclonedx/cyclonedx-library/res/schema');

export function cyclonedxValidator(): (doc: unknown) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  // A draft 2019 format ajv-formats lacks (the library validates it with ajv-formats-draft2019): not checked here.
  ajv.addFormat('iri-reference', true);
  // The main schema refers to its siblings by their file names, relative to its own $id.
  for (const f of ['spdx.SNAPSHOT.schema.json', 'jsf-0.82.SNAPSHOT.schema.json']) {
    const { $id: _id, ...schema } = JSON.parse(readFileSync(join(CDX_SCHEMAS, f), 'utf8')) as { $id?: string };
    ajv.addSchema(schema, `http://cyclonedx.org/schema/${f}`);
  }
  const validate = ajv.compile(JSON.parse(readFileSync(join(CDX_SCHEMAS, 'bom-1.6.SNAPSHOT.schema.json'), 'utf8')) as AnySchema);
  return (doc) => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

/**
 * The SPDX 2.3 rules these documents rely on, written from the specification (clauses 6–11, Annex
 * "JSON") for the fields they use: no npm package ships the official spdx-schema.json. Unknown fields
 * are refused as the official schema does (additionalProperties false).
 */
const checksum = { type: 'object', required: ['algorithm', 'checksumValue'], additionalProperties: false, properties: { algorithm: { enum: ['SHA1', 'SHA256'] }, checksumValue: { type: 'string', pattern: '^[0-9a-f]+$' } } };
const SPDX_ID = '^SPDXRef-[A-Za-z0-9.-]+$';
const SPDX_23 = {
  type: 'object',
  required: ['spdxVersion', 'dataLicense', 'SPDXID', 'name', 'documentNamespace', 'creationInfo'],
  additionalProperties: false,
  properties: {
    spdxVersion: { const: 'SPDX-2.3' },
    dataLicense: { const: 'CC0-1.0' },
    SPDXID: { const: 'SPDXRef-DOCUMENT' },
    name: { type: 'string', minLength: 1 },
    documentNamespace: { type: 'string', format: 'uri', not: { pattern: '#' } },
    creationInfo: {
      type: 'object', required: ['created', 'creators'], additionalProperties: false,
      properties: { created: { type: 'string', pattern: '^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$' }, creators: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^(Tool|Person|Organization): .+' } } },
    },
    packages: {
      type: 'array',
      items: {
        type: 'object', required: ['SPDXID', 'name', 'downloadLocation'], additionalProperties: false,
        properties: {
          SPDXID: { type: 'string', pattern: SPDX_ID }, name: { type: 'string', minLength: 1 }, versionInfo: { type: 'string' }, supplier: { type: 'string' },
          downloadLocation: { type: 'string' }, filesAnalyzed: { type: 'boolean' }, sourceInfo: { type: 'string' }, licenseConcluded: { type: 'string' },
          licenseDeclared: { type: 'string' }, copyrightText: { type: 'string' }, checksums: { type: 'array', items: checksum },
          primaryPackagePurpose: { enum: ['OTHER', 'INSTALL', 'ARCHIVE', 'FIRMWARE', 'APPLICATION', 'FRAMEWORK', 'LIBRARY', 'CONTAINER', 'SOURCE', 'DEVICE', 'OPERATING_SYSTEM', 'FILE'] },
          externalRefs: {
            type: 'array',
            items: { type: 'object', required: ['referenceCategory', 'referenceType', 'referenceLocator'], additionalProperties: false, properties: { referenceCategory: { enum: ['OTHER', 'PERSISTENT-ID', 'SECURITY', 'PACKAGE-MANAGER'] }, referenceType: { type: 'string' }, referenceLocator: { type: 'string', pattern: '^\\S+$' } } },
          },
        },
      },
    },
    files: {
      type: 'array',
      items: {
        type: 'object', required: ['SPDXID', 'fileName', 'checksums'], additionalProperties: false,
        // Clause 8.4: a file's checksums include SHA1.
        properties: { SPDXID: { type: 'string', pattern: SPDX_ID }, fileName: { type: 'string', pattern: '^\\./' }, checksums: { type: 'array', minItems: 1, items: checksum, contains: { properties: { algorithm: { const: 'SHA1' } } } }, licenseConcluded: { type: 'string' }, copyrightText: { type: 'string' } },
      },
    },
    relationships: {
      type: 'array',
      items: { type: 'object', required: ['spdxElementId', 'relationshipType', 'relatedSpdxElement'], additionalProperties: false, properties: { spdxElementId: { type: 'string' }, relationshipType: { enum: ['DESCRIBES', 'CONTAINS'] }, relatedSpdxElement: { type: 'string' } } },
    },
  },
};

export function spdxValidator(): (doc: unknown) => string[] {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  addFormats(ajv);
  const validate = ajv.compile(SPDX_23);
  return (doc) => (validate(doc) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`));
}

