// The JSON Schema (draft-07, what yaml-language-server and most editors read) of the declaration
// format, made from declaration-format.ts, the description the parser reads through. It is the strict
// reading (`validate --strict`): an unknown key is refused, where the parser alone only warns. A value
// that reads a variable (`${env:NAME}`, `${var:NAME}`) passes as text: its value is checked once it is read.
// scripts/build-schema.mjs writes it to schema/declaration.schema.json, the file the package ships.
import { DECLARATION, type FieldSpec, type Shape } from './declaration-format';

type Json = string | number | boolean | null | readonly Json[] | { readonly [k: string]: Json };
type Schema = { readonly [k: string]: Json };

export const DECLARATION_SCHEMA_FILE = 'schema/declaration.schema.json';

/** A value that reads a variable: any text holding `${`. */
const REFERENCE: Schema = { type: 'string', pattern: '\\$\\{' };

/**
 * A JSON Schema pattern (ECMA-262, no flags) with the regular expression's meaning: an `i` flag is
 * spelled out as `[aA]` classes. Escapes are kept; a letter inside a class is refused (no need yet).
 */
export function schemaPattern(re: RegExp): string {
  if (!re.flags.includes('i')) return re.source;
  let out = '';
  let inClass = false;
  for (let i = 0; i < re.source.length; i++) {
    const c = re.source[i]!;
    if (c === '\\') {
      out += c + re.source[++i]!;
    } else if (inClass) {
      if (/[a-z]/i.test(c)) throw new Error(`schemaPattern: a letter in a class of ${re.source}`);
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else {
      out += /[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c;
    }
  }
  return out;
}

function value(spec: FieldSpec, shapes: Map<string, Shape>): Schema {
  const description = spec.doc;
  switch (spec.kind) {
    case 'text': {
      // A number or boolean is read as the text it was written as (`version: 1.0` is "1.0").
      const base: Schema = spec.check?.pattern
        ? { type: ['string', 'number'], pattern: `${schemaPattern(spec.check.pattern)}|\\$\\{` }
        : { type: ['string', 'number', 'boolean'], ...(spec.required ? { pattern: '\\S' } : {}) };
      return { description, ...base, ...(spec.default !== undefined ? { default: spec.default } : {}) };
    }
    case 'int':
      return { description, anyOf: [{ type: 'integer', minimum: spec.min }, { type: 'string', pattern: '^\\s*\\d+\\s*$' }, REFERENCE] };
    case 'bool':
      return {
        description,
        anyOf: [{ type: 'boolean' }, { type: 'string', pattern: `^\\s*(?:${schemaPattern(/true|false/i)})\\s*$` }, REFERENCE],
        ...(spec.default !== undefined ? { default: spec.default } : {}),
      };
    case 'map': {
      // In draft-07 a key beside $ref is ignored: the description sits outside.
      const ref = shapeRef(spec.shape, shapes);
      if (!spec.refBy) return { description, anyOf: [ref] };
      const byName: Schema = { type: 'object', required: [spec.refBy], additionalProperties: false, properties: { [spec.refBy]: value(spec.shape.fields[spec.refBy]!, shapes) } };
      return { description, anyOf: [byName, ref] };
    }
    case 'list':
      return { description, type: 'array', items: value(spec.item, shapes), ...(spec.minItems !== undefined ? { minItems: spec.minItems } : {}) };
    case 'either':
      return { description, anyOf: spec.of.map((o) => value(o, shapes)) };
    case 'ignored':
      return { description };
  }
}

/** An optional key left empty (`installation:`) is as good as absent. */
function orNull(s: Schema): Schema {
  if (Array.isArray(s.type)) return { ...s, type: [...(s.type as string[]), 'null'] };
  if (typeof s.type === 'string') return { ...s, type: [s.type, 'null'] };
  if (Array.isArray(s.anyOf)) return { ...s, anyOf: [...(s.anyOf as Schema[]), { type: 'null' }] };
  return s;
}

function shapeRef(shape: Shape, shapes: Map<string, Shape>): Schema {
  const seen = shapes.get(shape.name);
  if (seen && seen !== shape) throw new Error(`two shapes are named ${shape.name}`);
  shapes.set(shape.name, shape);
  return { $ref: `#/definitions/${shape.name}` };
}

function object(shape: Shape, shapes: Map<string, Shape>): Schema {
  const fields = Object.entries(shape.fields);
  const required = fields.filter(([, f]) => 'required' in f && f.required === true).map(([k]) => k);
  const properties = Object.fromEntries(fields.map(([k, f]) => [k, 'required' in f && f.required === true ? value(f, shapes) : orNull(value(f, shapes))]));
  return {
    type: 'object',
    description: shape.doc,
    ...(required.length ? { required } : {}),
    properties,
    additionalProperties: false,
    ...(shape.needs ? { dependencies: shape.needs as Schema } : {}),
  };
}

/** The schema document, definitions in the order first met. */
export function declarationSchema(): Schema {
  const shapes = new Map<string, Shape>();
  const root = object(DECLARATION, shapes);
  const definitions: Record<string, Schema> = {};
  // A Map visits what is added while it is walked: nested shapes too.
  for (const [name, shape] of shapes) definitions[name] = object(shape, shapes);
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'appliance-forge declaration',
    ...root,
    definitions,
  };
}

/** The file's text: what the generator writes and the test compares. */
export function declarationSchemaText(): string {
  return `${JSON.stringify(declarationSchema(), null, 2)}\n`;
}
