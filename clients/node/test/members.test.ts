/**
 * scripts/members.mjs: the names the hand-written client declares, read from its source, which
 * the generator keeps its wrappers away from. Over the real src/ and over small synthetic ones.
 */

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, test } from "node:test";

import { PromptdClient } from "../src/index.js";
import { CLIENT_ROOT } from "./support/env.js";

interface Members {
  GENERATED_FILE: string;
  clientMembers(srcDir: string, options?: { className?: string; skip?: readonly string[] }): string[];
}

async function members(): Promise<Members> {
  return (await import(pathToFileURL(join(CLIENT_ROOT, "scripts", "members.mjs")).href)) as Members;
}

const SCRATCH = mkdtempSync(join(tmpdir(), "promptd-node-members-"));
after(() => rmSync(SCRATCH, { recursive: true, force: true }));

let folders = 0;
/** A fresh source folder holding `files` (name -> text). */
function sources(files: Record<string, string>): string {
  const dir = join(SCRATCH, `src${folders++}`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

test("the members read from src/ include the client's public methods, its static start, accessors, parameter properties and private members", async () => {
  const { clientMembers } = await members();
  const names = clientMembers(join(CLIENT_ROOT, "src"));
  for (const name of ["start", "stop", "call", "request", "notify", "onEvent", "registerHostProvider", "pid", "serverMethods", "connection", "process", "initializeResult", "emitError", "providers", "stopping", "constructor"]) {
    assert.ok(names.includes(name), `${name} missing from ${names.join(", ")}`);
  }
  assert.deepEqual(names, [...new Set(names)].sort());
});

test("no generated wrapper is among the members read from src/, though the client inherits them", async () => {
  const { clientMembers } = await members();
  const names = clientMembers(join(CLIENT_ROOT, "src"));
  assert.equal(typeof PromptdClient.prototype.reminderWrapMany, "function");
  assert.ok(!names.includes("reminderWrapMany"));
});

test("every kind of class member is read, from the class and from the bases declared in the package, followed through a renamed import", async () => {
  const { clientMembers } = await members();
  const dir = sources({
    "client.ts": `
      import { Root as Renamed } from "./nested/root.js";
      class Middle extends Renamed {
        protected middleMethod(): void {}
      }
      export class PromptdClient extends Middle {
        static start(): PromptdClient { return new PromptdClient(1, 2); }
        static readonly DEFAULT = 1;
        #secret = 1;
        private hidden = 2;
        declare declared: number;
        "quoted-name" = 3;
        ["computedName"](): void {}
        [Symbol.dispose](): void {}
        [key: string]: unknown;
        static { PromptdClient.DEFAULT; }
        constructor(readonly connection: number, private process: number, plain = 0) { super(); void plain; }
        get pid(): number { return 1; }
        set level(value: number) { void value; }
        #tick(): void {}
        onEvent(): void;
        onEvent(name?: string): void { void name; }
      }
    `,
    "nested/root.ts": `
      import { GeneratedMethods } from "../generated.js";
      export class Root extends GeneratedMethods {
        rootField = 0;
      }
    `,
    "generated.ts": `
      export abstract class GeneratedMethods { reminderWrap(): void {} }
      export class PromptdClient { decoy(): void {} }
    `,
  });
  assert.deepEqual(clientMembers(dir), [
    "#secret",
    "#tick",
    "DEFAULT",
    "computedName",
    "connection",
    "constructor",
    "declared",
    "hidden",
    "level",
    "middleMethod",
    "onEvent",
    "pid",
    "process",
    "quoted-name",
    "rootField",
    "start",
  ]);
});

test("a base class from another package or a global ends the chain", async () => {
  const { clientMembers } = await members();
  const dir = sources({
    "client.ts": `
      import { EventEmitter } from "node:events";
      class Failure extends Error { code = 1; }
      export class PromptdClient extends EventEmitter { own = new Failure(); }
    `,
  });
  assert.deepEqual(clientMembers(dir), ["constructor", "own"]);
});

test("a client class that is missing, or declared twice in hand-written files, is refused", async () => {
  const { clientMembers } = await members();
  assert.throws(() => clientMembers(sources({ "client.ts": "export class Other {}\n" })), /expected one class PromptdClient .* found 0/);
  const twice = sources({ "a.ts": "export class PromptdClient {}\n", "b.ts": "export class PromptdClient {}\n" });
  assert.throws(() => clientMembers(twice), /found 2/);
});

test("a base class the syntax cannot name is refused rather than read as having no members", async () => {
  const { clientMembers } = await members();
  const mixin = sources({ "client.ts": "const mix = <T>(base: T): T => base;\nclass Base {}\nexport class PromptdClient extends mix(Base) {}\n" });
  assert.throws(() => clientMembers(mixin), /PromptdClient extends mix\(Base\), which this reader cannot follow/);
  const reexported = sources({
    "client.ts": `import { Base } from "./index.js";\nexport class PromptdClient extends Base {}\n`,
    "index.ts": `export { Base } from "./base.js";\n`,
    "base.ts": "export class Base { hidden = 1; }\n",
  });
  assert.throws(() => clientMembers(reexported), /no class Base is declared/);
});
