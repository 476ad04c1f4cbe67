/**
 * Function declarations for the Gemini `setup` message, from a tool's zod schema.
 *
 * liveline sends `parametersJsonSchema` (plain JSON Schema) rather than the OpenAPI-subset
 * `parameters` (`type: "OBJECT"`) the SDK recordings use: the tool's zod schema converts to
 * JSON Schema directly, with no lossy mapping of ours in between.
 */
import { z } from "zod";
import type { GeminiBehavior, GeminiFunctionDeclaration } from "./schemas.js";

export type JsonSchemaObject = Record<string, unknown>;

/** A tool as the session knows it: its arguments already as a JSON Schema object. */
export interface GeminiToolSpec {
  name: string;
  description: string;
  parameters: JsonSchemaObject;
  /** NON_BLOCKING lets the model go on while the call runs; needed for SILENT results. */
  behavior?: "BLOCKING" | "NON_BLOCKING" | undefined;
}

/** Keywords zod emits that Gemini's schema validator rejects. */
const REJECTED_KEYWORDS = new Set(["$schema", "additionalProperties"]);

/** Keywords whose value is a map from *names* to schemas (names are data, not keywords). */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions"]);

/** Removes rejected keywords at every schema level, but never a property that has such a name. */
export function sanitizeJsonSchema(schema: JsonSchemaObject): JsonSchemaObject {
  const out: JsonSchemaObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (REJECTED_KEYWORDS.has(key)) continue;
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      const mapped: JsonSchemaObject = {};
      for (const [name, sub] of Object.entries(value)) {
        mapped[name] = isObject(sub) ? sanitizeJsonSchema(sub) : sub;
      }
      out[key] = mapped;
    } else {
      out[key] = sanitizeValue(value);
    }
  }
  return out;
}

function sanitizeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sanitizeValue);
  if (isObject(value)) return sanitizeJsonSchema(value);
  return value;
}

function isObject(value: unknown): value is JsonSchemaObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The wire declaration for a tool spec. */
export function declareFunction(tool: GeminiToolSpec): GeminiFunctionDeclaration {
  const declaration: GeminiFunctionDeclaration = {
    name: tool.name,
    description: tool.description,
    parametersJsonSchema: sanitizeJsonSchema(tool.parameters),
  };
  const behavior: GeminiBehavior | undefined = tool.behavior;
  if (behavior !== undefined) declaration.behavior = behavior;
  return declaration;
}

/** JSON Schema of a tool's arguments as the model must produce them (zod *input* side). */
function toolParameters(schema: z.ZodType): JsonSchemaObject {
  return sanitizeJsonSchema(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }));
}

/**
 * A declaration straight from a zod schema, or from `inputSchema`, a JSON Schema given
 * elsewhere (an MCP server's), sanitized as a zod one is.
 */
export function toolDeclaration(
  name: string,
  description: string,
  schema: z.ZodType,
  behavior?: "BLOCKING" | "NON_BLOCKING",
  inputSchema?: Readonly<Record<string, unknown>>,
): GeminiFunctionDeclaration {
  const parameters =
    inputSchema === undefined ? toolParameters(schema) : sanitizeJsonSchema({ ...inputSchema });
  return declareFunction({ name, description, parameters, behavior });
}
