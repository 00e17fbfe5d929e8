/** The generated types: fresh against protocol/openrpc.json, and the generator's mapping. */

import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "node:test";

import { ErrorCodes, METHOD_NAMES, PromptdClient, ResponseError, type ErrorCode, type LintKind, type ResponseErrorCode } from "../src/index.js";
import { CLIENT_ROOT, REPO_ROOT } from "./support/env.js";

const GENERATOR = join(CLIENT_ROOT, "scripts", "generate.mjs");

interface Generator {
  HEADER: string;
  render(doc: unknown, reserved?: Iterable<string>): string;
  tsType(schema: unknown): string;
  wrapperName(method: string): string;
}

async function generator(): Promise<Generator> {
  return (await import(pathToFileURL(GENERATOR).href)) as Generator;
}

test("the committed src/generated.ts matches protocol/openrpc.json (else run `make -C clients/node generate`)", () => {
  execFileSync(process.execPath, [GENERATOR, "--check"], { stdio: "pipe" });
});

test("the generated file starts with a do-not-edit line naming the command that regenerates it", async () => {
  const first = readFileSync(join(CLIENT_ROOT, "src", "generated.ts"), "utf8").split("\n")[0];
  assert.equal(first, (await generator()).HEADER);
  assert.match(first ?? "", /DO NOT EDIT.*make -C clients\/node generate/);
});

test("every request method of the protocol has a typed wrapper on the client, except those the document marks x-no-wrapper", async () => {
  const doc = JSON.parse(readFileSync(join(REPO_ROOT, "protocol", "openrpc.json"), "utf8")) as {
    methods: Array<{ name: string; result?: unknown; "x-no-wrapper"?: boolean }>;
  };
  const requests = doc.methods.filter((method) => method.result !== undefined);
  assert.deepEqual([...METHOD_NAMES].sort(), requests.map((method) => method.name).sort());
  const { wrapperName } = await generator();
  for (const method of requests) {
    const wrapped = wrapperName(method.name) in PromptdClient.prototype;
    assert.equal(wrapped, method["x-no-wrapper"] !== true, `${method.name}: wrapper ${wrapped ? "present" : "missing"}`);
  }
  assert.ok(requests.some((method) => method.name === "shutdown" && method["x-no-wrapper"] === true));
});

test("method names become camelCase wrappers", async () => {
  const { wrapperName } = await generator();
  assert.equal(wrapperName("reminder/wrap_many"), "reminderWrapMany");
  assert.equal(wrapperName("rpc.discover"), "rpcDiscover");
  assert.equal(wrapperName("initialize"), "initialize");
  assert.equal(typeof PromptdClient.prototype.reminderWrapMany, "function");
});

test("JSON Schema forms map to the TypeScript types a reader would expect", async () => {
  const { tsType } = await generator();
  const cases: Array<[unknown, string]> = [
    [{ type: "string" }, "string"],
    [{ type: "integer" }, "number"],
    [{ anyOf: [{ type: "string" }, { type: "null" }] }, "string | null"],
    [{ enum: ["delivered", "dropped"] }, '"delivered" | "dropped"'],
    [{ const: "host" }, '"host"'],
    [{ type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } }, "(string | number)[]"],
    [{ type: "array", prefixItems: [{ type: "string" }, { type: "integer" }] }, "[string, number]"],
    [{ type: "object", additionalProperties: { type: "string" } }, "Record<string, string>"],
    [{ type: "object", additionalProperties: false }, "Record<string, never>"],
    [{ $ref: "#/components/schemas/WrapResult" }, "WrapResult"],
    [{}, "unknown"],
    [{ type: ["string", "null"] }, "string | null"],
  ];
  for (const [schema, expected] of cases) {
    assert.equal(tsType(schema), expected, JSON.stringify(schema));
  }
});

/** A protocol document with one request method of each name, taking and giving nothing. */
function methodsDoc(...names: string[]): unknown {
  return { methods: names.map((name) => ({ name, params: [], result: { name: "result", schema: {} } })), components: { schemas: {} } };
}

test("the generator refuses a method that would shadow a client member: public, static, an accessor, a parameter property, a private one or one every object inherits", async () => {
  const { render } = await generator();
  const cases: Array<[method: string, member: string]> = [
    ["stop", "stop"],
    ["start", "start"],
    ["server_methods", "serverMethods"],
    ["connection", "connection"],
    ["emit/error", "emitError"],
    ["stopping", "stopping"],
    // What every object inherits is taken too.
    ["to_string", "toString"],
    ["value_of", "valueOf"],
  ];
  for (const [method, member] of cases) {
    assert.throws(() => render(methodsDoc("reminder/wrap", method)), { message: `method ${method} would shadow the client's own ${member}()` });
  }
  assert.match(render(methodsDoc("reminder/wrap")), /reminderWrap\(/);
});

test("the generator's command line fails, saying which method shadows which member, and writes nothing", () => {
  const dir = mkdtempSync(join(tmpdir(), "promptd-node-generate-"));
  try {
    const protocol = join(dir, "openrpc.json");
    const out = join(dir, "generated.ts");
    writeFileSync(protocol, JSON.stringify(methodsDoc("on_event")));
    const run = spawnSync(process.execPath, [GENERATOR, "--protocol", protocol, "--out", out], { encoding: "utf8" });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /method on_event would shadow the client's own onEvent\(\)/);
    assert.equal(existsSync(out), false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A method whose params and result hold the caller's own messages (x-caller-type). */
function callerTypedDoc(resultMarked: boolean): unknown {
  const messages = { type: "array", items: { $ref: "#/components/schemas/Msg" }, "x-caller-type": "Message" };
  const plain = { type: "array", items: { $ref: "#/components/schemas/Msg" } };
  return {
    methods: [
      {
        name: "history/clean",
        params: [{ name: "messages", required: true, schema: messages }],
        "x-params-schema": { $ref: "#/components/schemas/CleanParams" },
        result: { name: "result", schema: { $ref: "#/components/schemas/CleanResult" } },
      },
    ],
    components: {
      schemas: {
        Msg: { type: "object", additionalProperties: true },
        CleanParams: { type: "object", properties: { messages }, required: ["messages"] },
        CleanResult: { type: "object", properties: { messages: resultMarked ? messages : plain, count: { type: "integer" } }, required: ["messages", "count"] },
      },
    },
  };
}

test("x-caller-type makes the models and the wrapper generic, their plain names unchanged", async () => {
  const { render } = await generator();
  const out = render(callerTypedDoc(true));
  assert.match(out, /export interface CleanParams<Message extends object = Msg> \{\n  messages: Message\[\];/);
  assert.match(out, /export interface CleanResult<Message extends object = Msg> \{/);
  assert.match(out, /params: CleanParams<object>;\n    result: CleanResult<object>;/);
  assert.match(out, /historyClean<Message extends object = Msg>\(params: CleanParams<Message>, options\?: RequestOptions\): Promise<CleanResult<Message>>/);
  // A result that does not give the messages back is not generic: only the params are.
  assert.match(render(callerTypedDoc(false)), /historyClean<Message extends object = Msg>\(params: CleanParams<Message>, options\?: RequestOptions\): Promise<CleanResult>/);
});

// Built from pieces so that this file does not match itself.
const ANY = "an" + "y";
const EXPLICIT_ANY = new RegExp(`(:\\s*${ANY}\\b|\\bas\\s+${ANY}\\b|<${ANY}>|\\b${ANY}\\[\\])`);

test("no source file uses the any type (strict mode forbids implicit any; this forbids the explicit one)", () => {
  const offenders: string[] = [];
  for (const folder of ["src", "test", join("test", "support")]) {
    for (const file of readdirSync(join(CLIENT_ROOT, folder))) {
      if (!file.endsWith(".ts")) {
        continue;
      }
      const text = readFileSync(join(CLIENT_ROOT, folder, file), "utf8");
      if (EXPLICIT_ANY.test(text)) {
        offenders.push(join(folder, file));
      }
    }
  }
  assert.deepEqual(offenders, []);
});

test("ResponseError.code is typed as the generated ErrorCode union, and a code newer than it still fits", () => {
  const known = ResponseError.fromWire({ code: -32602, message: "Invalid params", data: { kind: "invalid_params" } });
  const named: ResponseErrorCode = ErrorCodes.InvalidParams;
  assert.equal(known.code, named);
  // Narrowing on a known code works as on the union.
  const which = (code: ResponseErrorCode): string => (code === ErrorCodes.InvalidParams ? "invalid params" : code === ErrorCodes.ServerShutDown ? "shut down" : "other");
  assert.equal(which(known.code), "invalid params");
  const newer = ResponseError.fromWire({ code: -32099, message: "from a newer server" });
  assert.equal(newer.code, -32099);
  assert.equal(which(newer.code), "other");
  const every: readonly ErrorCode[] = Object.values(ErrorCodes);
  assert.ok(every.includes(ErrorCodes.InvalidParams));
  // @ts-expect-error: a code is a number, never a string
  assert.throws(() => new ResponseError("bad", "x").code.toFixed());
});

test("lint kinds are the generated closed set", () => {
  const kind: LintKind = "unguarded_tool";
  // @ts-expect-error: not a lint kind
  const typo: LintKind = "unguarded_tol";
  assert.notEqual(kind, typo);
});
