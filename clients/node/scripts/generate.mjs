#!/usr/bin/env node
// @ts-check
/**
 * Generates src/generated.ts (types and typed method wrappers) from protocol/openrpc.json, the
 * document the server builds from its own models. Plain JavaScript on purpose: it must run before
 * anything is compiled, even when the committed output no longer type-checks against a changed
 * protocol. It needs the dev dependencies (members.mjs parses src/ with TypeScript's parser to
 * learn which names the hand-written client already uses), which `make generate` installs.
 *
 *   node scripts/generate.mjs            write src/generated.ts
 *   node scripts/generate.mjs --check    exit 1 when src/generated.ts is stale (used by the tests)
 *   node scripts/generate.mjs --protocol PATH --out PATH
 */

import { readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { clientMembers } from "./members.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const DEFAULT_PROTOCOL = resolve(HERE, "../../../protocol/openrpc.json");
const DEFAULT_OUT = resolve(HERE, "../src/generated.ts");
// The hand-written client, whose members no wrapper may shadow (read by members.mjs).
export const CLIENT_SOURCES = resolve(HERE, "../src");
export const HEADER =
  "// DO NOT EDIT: generated from protocol/openrpc.json by `make -C clients/node generate` (scripts/generate.mjs).";

/**
 * Requests the client drives itself get no wrapper: the document marks them `x-no-wrapper`
 * (promptd's method table decides, for every client alike). `stop()` sends `shutdown` (then
 * `exit`, then closes stdin, signals), so a raw `shutdown()` would only leave a half-stopped
 * client behind.
 */
export function hasWrapper(method) {
  return method["x-no-wrapper"] !== true;
}
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** @typedef {Record<string, unknown>} Schema */

/** @param {unknown} value @returns {value is Schema} */
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A component name as a TypeScript identifier (pydantic names generics like `Page_Item_`). */
function typeName(name) {
  const cleaned = name.replace(/[^A-Za-z0-9_$]/g, "_");
  return /^[0-9]/.test(cleaned) ? `_${cleaned}` : cleaned;
}

/** `reminder/wrap_many` -> `reminderWrapMany`, `rpc.discover` -> `rpcDiscover`. */
export function wrapperName(method) {
  const words = method.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return words
    .map((word, i) => (i === 0 ? word.charAt(0).toLowerCase() + word.slice(1) : word.charAt(0).toUpperCase() + word.slice(1)))
    .join("");
}

function propertyKey(name) {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name);
}

/** @param {string[]} members */
function union(members) {
  const unique = [...new Set(members)];
  if (unique.includes("unknown")) return "unknown";
  return unique.length === 0 ? "never" : unique.join(" | ");
}

/** Parenthesises a union or intersection before `[]` binds to it. */
function arrayOf(type) {
  return /[|&]/.test(type) && !/^[{[]/.test(type) ? `(${type})[]` : `${type}[]`;
}

function comment(schema, indent) {
  const lines = [];
  if (typeof schema.description === "string") lines.push(...schema.description.split("\n"));
  if ("default" in schema && schema.default !== null && !(isObject(schema.default) && Object.keys(schema.default).length === 0)) {
    lines.push(`@default ${JSON.stringify(schema.default)}`);
  }
  if (lines.length === 0) return "";
  const safe = lines.map((line) => line.replace(/\*\//g, "*\\/"));
  return safe.length === 1 ? `${indent}/** ${safe[0]} */\n` : `${indent}/**\n${safe.map((l) => `${indent} * ${l}`.trimEnd()).join("\n")}\n${indent} */\n`;
}

/**
 * One JSON Schema as a TypeScript type expression. Covers what pydantic emits ($ref, anyOf,
 * oneOf, allOf, enum, const, type lists, arrays, tuples, objects, maps); anything else is
 * `unknown`, which is honest rather than wrong.
 * @param {unknown} schema @param {string} indent @returns {string}
 */
export function tsType(schema, indent = "") {
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (!isObject(schema)) return "unknown";
  const caller = callerType(schema);
  if (caller) return caller.array ? `${caller.name}[]` : caller.name;
  if (typeof schema.$ref === "string") return typeName(schema.$ref.split("/").pop() ?? "unknown");
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return union(schema.enum.map((v) => JSON.stringify(v)));
  for (const key of ["anyOf", "oneOf"]) {
    const options = schema[key];
    if (Array.isArray(options)) return union(options.map((s) => tsType(s, indent)));
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((s) => tsType(s, indent));
    return parts.length === 1 ? (parts[0] ?? "unknown") : parts.map((p) => (p.includes("|") ? `(${p})` : p)).join(" & ");
  }
  if (Array.isArray(schema.type)) return union(schema.type.map((t) => tsType({ ...schema, type: t }, indent)));
  switch (schema.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return arrayType(schema, indent);
    case "object":
      return objectType(schema, indent);
    default:
      return isObject(schema.properties) ? objectType(schema, indent) : "unknown";
  }
}

function arrayType(schema, indent) {
  if (Array.isArray(schema.prefixItems)) {
    const items = schema.prefixItems.map((s) => tsType(s, indent));
    const rest = schema.items === false || schema.items === undefined ? "" : `, ...${arrayOf(tsType(schema.items, indent))}`;
    return `[${items.join(", ")}${rest}]`;
  }
  return arrayOf(tsType(schema.items, indent));
}

function objectType(schema, indent) {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  const extra = schema.additionalProperties;
  if (names.length === 0) {
    if (extra === false) return "Record<string, never>";
    return `Record<string, ${isObject(extra) ? tsType(extra, indent) : "unknown"}>`;
  }
  return `{\n${members(schema, indent + "  ")}${indent}}`;
}

/** The members of an object schema, one per line, with `?` for those not required. */
function members(schema, indent) {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  let out = "";
  for (const [name, property] of Object.entries(properties)) {
    const optional = required.has(name) ? "" : "?";
    out += comment(isObject(property) ? property : {}, indent);
    out += `${indent}${propertyKey(name)}${optional}: ${tsType(property, indent)};\n`;
  }
  // Extra members allowed: an index signature of `unknown`, the only type every member fits.
  if (schema.additionalProperties !== undefined && schema.additionalProperties !== false) {
    out += `${indent}[key: string]: unknown;\n`;
  }
  return out;
}

/**
 * A field marked `x-caller-type: NAME` holds the caller's own data, given back in the same shape
 * (history/sanitize's messages, content/sanitize_value's value): NAME is a type parameter standing
 * for the field's type, or its items' type for an array.
 * @param {Schema} schema @returns {{name: string, array: boolean, replaced: unknown} | null}
 */
function callerType(schema) {
  const name = schema["x-caller-type"];
  if (typeof name !== "string") return null;
  if (!IDENTIFIER.test(name)) throw new Error(`x-caller-type ${JSON.stringify(name)} is not a type parameter name`);
  const { "x-caller-type": _, ...plain } = schema;
  const array = plain.type === "array" && isObject(plain.items);
  return { name, array, replaced: array ? plain.items : plain };
}

/**
 * The type parameters of a component: one per `x-caller-type` among its properties, bounded by
 * `object` where the field's type is an object (a message), defaulting to the schema's own type,
 * so that the component named without arguments is what it was before.
 * @param {unknown} schema @param {Schema} components
 * @returns {{name: string, bound: string | null, fallback: string}[]}
 */
export function typeParameters(schema, components) {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const found = new Map();
  for (const property of Object.values(schema.properties)) {
    const caller = isObject(property) ? callerType(property) : null;
    if (!caller || found.has(caller.name)) continue;
    let target = caller.replaced;
    if (isObject(target) && typeof target.$ref === "string") target = components[target.$ref.split("/").pop() ?? ""];
    const bound = isObject(target) && target.type === "object" ? "object" : null;
    found.set(caller.name, { name: caller.name, bound, fallback: tsType(caller.replaced) });
  }
  return [...found.values()];
}

/** `<Message extends object = HistoryMessage>`, or "" for a component without type parameters. */
function declareParameters(parameters) {
  if (parameters.length === 0) return "";
  return `<${parameters.map((p) => `${p.name}${p.bound ? ` extends ${p.bound}` : ""} = ${p.fallback}`).join(", ")}>`;
}

/**
 * A schema as the method tables name it: a generic component instantiated with its bounds
 * (`HistorySanitizeParams<object>`), so that a wrapper's own instantiation is assignable to it.
 */
function instantiated(schema, components, indent) {
  if (isObject(schema) && typeof schema.$ref === "string") {
    const name = schema.$ref.split("/").pop() ?? "";
    const parameters = typeParameters(components[name], components);
    if (parameters.length > 0) return `${typeName(name)}<${parameters.map((p) => p.bound ?? "unknown").join(", ")}>`;
  }
  return tsType(schema, indent);
}

/** The declaration of one component schema. */
function declaration(name, schema, components) {
  const doc = comment(schema, "");
  const type = tsType(schema, "");
  const parameters = declareParameters(typeParameters(schema, components));
  if (type.startsWith("{\n")) return `${doc}export interface ${typeName(name)}${parameters} ${type}\n`;
  if (parameters) throw new Error(`${name}: x-caller-type is only supported on the properties of an object`);
  return `${doc}export type ${typeName(name)} = ${type};\n`;
}

/**
 * The params of a method: the named model the document gives in `x-params-schema` (so that
 * `turn/compose` takes a `ComposeParams`), else its by-name param list as an object type.
 */
function paramsType(method, indent, components = {}) {
  const named = method["x-params-schema"];
  if (isObject(named) && typeof named.$ref === "string") return instantiated(named, components, indent);
  const params = Array.isArray(method.params) ? method.params : [];
  if (params.length === 0) return "Record<string, never>";
  const schema = {
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    required: params.filter((p) => p.required).map((p) => p.name),
  };
  return `{\n${members(schema, indent + "  ")}${indent}}`;
}

/**
 * The wrapper of a method whose params model has type parameters (x-caller-type): generic over
 * them, its result model instantiated with the same ones. Null for every other method.
 */
function genericWrapper(method, components) {
  const named = method["x-params-schema"];
  const result = isObject(method.result) ? method.result.schema : undefined;
  if (!isObject(named) || typeof named.$ref !== "string") return null;
  const paramsName = named.$ref.split("/").pop() ?? "";
  const parameters = typeParameters(components[paramsName], components);
  if (parameters.length === 0) return null;
  const names = parameters.map((p) => p.name);
  let resultType = tsType(result, "  ");
  if (isObject(result) && typeof result.$ref === "string") {
    const resultName = result.$ref.split("/").pop() ?? "";
    const own = typeParameters(components[resultName], components).map((p) => p.name);
    const unknown = own.filter((n) => !names.includes(n));
    if (unknown.length > 0) throw new Error(`${method.name}: the result's type parameters ${unknown} are not the params'`);
    if (own.length > 0) resultType = `${typeName(resultName)}<${own.join(", ")}>`;
  }
  return { parameters: declareParameters(parameters), params: `${typeName(paramsName)}<${names.join(", ")}>`, result: resultType };
}

/**
 * @param {unknown} doc the OpenRPC document
 * @param {Iterable<string>} reserved names no wrapper may take: by default, the members of
 *   PromptdClient and its hand-written base classes, read from CLIENT_SOURCES
 * @returns {string}
 */
export function render(doc, reserved = clientMembers(CLIENT_SOURCES)) {
  if (!isObject(doc) || !Array.isArray(doc.methods)) throw new Error("not an OpenRPC document: no methods");
  const components = isObject(doc.components) && isObject(doc.components.schemas) ? doc.components.schemas : {};
  const methods = [...doc.methods].filter(isObject).sort((a, b) => (String(a.name) < String(b.name) ? -1 : 1));
  // (Plain code-unit order, never localeCompare: the output must not depend on the machine's locale.)
  const requests = methods.filter((m) => m.result !== undefined);
  const notifications = methods.filter((m) => m.result === undefined);
  // The other direction: what the server sends (provider/produce, event/* notifications).
  const inbound = Array.isArray(doc["x-server-to-client"]) ? doc["x-server-to-client"].filter(isObject) : [];
  const serverRequests = inbound.filter((m) => m.result !== undefined);
  const events = inbound.filter((m) => m.result === undefined);
  const errors = Array.isArray(doc["x-errors"]) ? doc["x-errors"].filter(isObject) : [];

  // Every object inherits these (toString, valueOf, hasOwnProperty, ...): a wrapper named like one
  // would change how the client prints or compares, so they are taken as the client's own are.
  const taken = new Set([...reserved, ...Object.getOwnPropertyNames(Object.prototype)]);
  const seen = new Map();
  for (const method of requests) {
    const name = wrapperName(String(method.name));
    if (taken.has(name)) throw new Error(`method ${method.name} would shadow the client's own ${name}()`);
    if (seen.has(name)) throw new Error(`methods ${seen.get(name)} and ${method.name} both map to ${name}()`);
    seen.set(name, method.name);
  }

  const out = [HEADER, ""];
  out.push(`import type { RequestOptions } from "./connection.js";`, "");
  out.push(`/** The protocol version of the document these types were generated from. */`);
  out.push(`export const PROTOCOL_VERSION = ${JSON.stringify(String(doc["x-protocol-version"] ?? ""))};`, "");
  for (const name of Object.keys(components).sort()) {
    out.push(declaration(name, components[name], components));
  }
  out.push("/** Every request method: its params (by name) and its result. */");
  out.push("export interface Methods {");
  for (const method of requests) {
    const result = isObject(method.result) ? instantiated(method.result.schema, components, "    ") : "unknown";
    out.push(`  ${JSON.stringify(method.name)}: {\n    params: ${paramsType(method, "    ", components)};\n    result: ${result};\n  };`);
  }
  out.push("}", "");
  out.push("/** Notifications the client sends (never answered). */");
  out.push("export interface Notifications {");
  for (const method of notifications) {
    out.push(`  ${JSON.stringify(method.name)}: {\n    params: ${paramsType(method, "    ")};\n  };`);
  }
  out.push("}", "");
  out.push("/** Requests the server sends the client, which the client answers. */");
  out.push("export interface ServerRequests {");
  for (const method of serverRequests) {
    const result = isObject(method.result) ? tsType(method.result.schema, "    ") : "unknown";
    out.push(`  ${JSON.stringify(method.name)}: {\n    params: ${paramsType(method, "    ")};\n    result: ${result};\n  };`);
  }
  out.push("}", "");
  out.push("/** Event notifications the server sends: each event's payload. */");
  out.push("export interface Events {");
  for (const method of events) {
    const summary = typeof method.summary === "string" ? method.summary : "";
    if (summary) out.push(`  /** ${summary.replace(/\*\//g, "*\\/")} */`);
    out.push(`  ${JSON.stringify(method.name)}: ${paramsType(method, "  ")};`);
  }
  out.push("}", "");
  out.push("export type ServerRequestName = keyof ServerRequests;");
  // The document names the closed set itself (the EventName schema); otherwise it is derived here.
  if (!("EventName" in components)) out.push("export type EventName = keyof Events;");
  out.push(`export const EVENT_NAMES: readonly (keyof Events)[] = ${JSON.stringify(events.map((m) => m.name))};`, "");
  out.push("/** An event handler's arguments: narrowing `event` narrows `params`. */");
  out.push("export type EventArgs = { [E in keyof Events]: [event: E, params: Events[E]] }[keyof Events];", "");
  out.push("/**");
  out.push(" * Every error code on the wire (JSON-RPC's, LSP's cancel code, promptd's -32000..-32099), by");
  out.push(" * name. Branch on `code` and `data.kind` (ErrorKind), never on the message.");
  out.push(" */");
  out.push("export const ErrorCodes = {");
  for (const error of errors) {
    const kinds = Array.isArray(error.kinds) ? error.kinds.filter(isObject).map((k) => `\`${k.kind}\``) : [];
    out.push(`  /** ${String(error.message).replace(/\*\//g, "*\\/")}${kinds.length ? ` (data.kind: ${kinds.join(", ")})` : ""} */`);
    out.push(`  ${propertyKey(String(error.name))}: ${Number(error.code)},`);
  }
  out.push("} as const;", "");
  out.push("export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];", "");
  out.push("/** The code each `data.kind` comes with. */");
  out.push(`export const ERROR_KIND_CODES: Readonly<Record<${"ErrorKind" in components ? "ErrorKind" : "string"}, ErrorCode>> = {`);
  for (const error of errors) {
    for (const kind of Array.isArray(error.kinds) ? error.kinds.filter(isObject) : []) {
      out.push(`  ${propertyKey(String(kind.kind))}: ${Number(error.code)},`);
    }
  }
  out.push("};", "");
  out.push("export type MethodName = keyof Methods;");
  out.push(`export type ParamsOf<M extends MethodName> = Methods[M]["params"];`);
  out.push(`export type ResultOf<M extends MethodName> = Methods[M]["result"];`);
  out.push("export type NotificationName = keyof Notifications;", "");
  out.push(`export const METHOD_NAMES: readonly MethodName[] = ${JSON.stringify(requests.map((m) => m.name))};`, "");
  out.push("/** One typed wrapper per request method; PromptdClient supplies `call`. */");
  out.push("export abstract class GeneratedMethods {");
  out.push("  abstract call<M extends MethodName>(method: M, params: ParamsOf<M>, options?: RequestOptions): Promise<ResultOf<M>>;");
  for (const method of requests.filter(hasWrapper)) {
    const name = JSON.stringify(method.name);
    const params = Array.isArray(method.params) ? method.params : [];
    const optional = params.every((p) => !p.required);
    const summary = typeof method.summary === "string" ? method.summary : "";
    out.push("");
    out.push(`  /** \`${method.name}\`${summary ? `: ${summary.replace(/\*\//g, "*\\/")}` : ""} */`);
    const generic = genericWrapper(method, components);
    if (generic) {
      // What goes in as the caller's own type comes back as it: the server keeps the shape.
      out.push(`  ${wrapperName(String(method.name))}${generic.parameters}(params: ${generic.params}, options?: RequestOptions): Promise<${generic.result}> {`);
      out.push(`    return this.call(${name}, params, options) as Promise<${generic.result}>;`);
      out.push("  }");
      continue;
    }
    out.push(
      `  ${wrapperName(String(method.name))}(params: ParamsOf<${name}>${optional ? " = {}" : ""}, options?: RequestOptions): Promise<ResultOf<${name}>> {`,
    );
    out.push(`    return this.call(${name}, params, options);`);
    out.push("  }");
  }
  out.push("}", "");
  return out.join("\n");
}

function main(argv) {
  const option = (flag, fallback) => {
    const i = argv.indexOf(flag);
    return i >= 0 && argv[i + 1] ? resolve(argv[i + 1]) : fallback;
  };
  const protocol = option("--protocol", DEFAULT_PROTOCOL);
  const target = option("--out", DEFAULT_OUT);
  const text = render(JSON.parse(readFileSync(protocol, "utf8")));
  if (argv.includes("--check")) {
    let current = "";
    try {
      current = readFileSync(target, "utf8");
    } catch {
      // a missing file is simply stale
    }
    if (current !== text) {
      process.stderr.write(`${target} is stale: run \`make -C clients/node generate\`\n`);
      return 1;
    }
    return 0;
  }
  writeFileSync(target, text);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
