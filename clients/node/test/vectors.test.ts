/** Replays every shared vector against a real sidecar: the method vectors
 * (protocol/vectors/<area>/*.json) over one client, and the raw-bytes wire vectors
 * (protocol/vectors/wire/*.json) each over a `promptd serve` of its own. The same files the Python
 * and Go suites replay. */

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";

import { PromptdClient, ResponseError } from "../src/index.js";
import { PROMPTD, serverEnv, startClient, VECTORS } from "./support/env.js";

interface Vector {
  description: string;
  method: string;
  params?: unknown;
  expect: { result: unknown } | { error: { code: number; kind: string } };
}

function loadVectors(): Array<{ name: string; vector: Vector }> {
  const cases: Array<{ name: string; vector: Vector }> = [];
  for (const area of readdirSync(VECTORS).sort()) {
    const folder = join(VECTORS, area);
    if (area === "wire" || !statSync(folder).isDirectory()) {
      continue;
    }
    for (const file of readdirSync(folder).sort()) {
      if (file.endsWith(".json")) {
        cases.push({ name: `${area}/${file.slice(0, -".json".length)}`, vector: JSON.parse(readFileSync(join(folder, file), "utf8")) as Vector });
      }
    }
  }
  return cases;
}

const CASES = loadVectors();

async function outcome(client: PromptdClient, vector: Vector): Promise<{ result: unknown } | { error: ResponseError }> {
  try {
    return { result: await client.request(vector.method, vector.params) };
  } catch (error: unknown) {
    if (error instanceof ResponseError) {
      return { error };
    }
    throw error;
  }
}

function check(vector: Vector, got: { result: unknown } | { error: ResponseError }): void {
  if ("result" in vector.expect) {
    assert.ok("result" in got, `expected a result, got ${"error" in got ? `error ${got.error.code} ${got.error.kind}` : "?"}`);
    assert.deepStrictEqual(got.result, vector.expect.result);
  } else {
    assert.ok("error" in got, `expected error ${vector.expect.error.code}, got a result`);
    assert.equal(got.error.code, vector.expect.error.code);
    assert.equal(got.error.kind, vector.expect.error.kind);
  }
}

test("there are vectors to replay", () => {
  assert.ok(CASES.length >= 10, `only ${CASES.length} vectors found under ${VECTORS}`);
});

let shared: PromptdClient;
before(async () => {
  shared = (await startClient({ offsetUnit: "code_points" })).client;
});
after(async () => {
  await shared.stop();
});

for (const { name, vector } of CASES) {
  test(`vector ${name}: ${vector.description}`, async () => {
    check(vector, await outcome(shared, vector));
  });
}

test("every vector gives the same answer on a fresh server and concurrently, in reverse order", async () => {
  const { client } = await startClient({ offsetUnit: "code_points" });
  try {
    const reversed = [...CASES].reverse();
    const outcomes = await Promise.all(reversed.map(({ vector }) => outcome(client, vector)));
    reversed.forEach(({ vector }, i) => check(vector, outcomes[i] ?? { result: undefined }));
  } finally {
    await client.stop();
  }
});

// ---- wire vectors (protocol/vectors/README.md, "Wire vectors") ----------------------------------

type WireInput = string | { raw: string } | { hex: string } | { fill: string; times: number } | { await: number };

interface WireVector {
  description: string;
  in: WireInput[];
  out: unknown[];
  exit_code?: number;
  max_message_bytes?: number;
}

const WIRE = join(VECTORS, "wire");
const WIRE_CASES = readdirSync(WIRE)
  .filter((file) => file.endsWith(".json"))
  .sort()
  .map((file) => ({ name: file.slice(0, -".json".length), vector: JSON.parse(readFileSync(join(WIRE, file), "utf8")) as WireVector }));

const WIRE_PATIENCE_MS = 10_000;

/** Runs one vector against a spawned `promptd serve`: the frames it wrote and its exit status. */
async function replayWire(vector: WireVector): Promise<{ frames: unknown[]; code: number | null }> {
  const extra: Record<string, string> = vector.max_message_bytes === undefined ? {} : { PROMPTD_MAX_MESSAGE_BYTES: String(vector.max_message_bytes) };
  const child = spawn(PROMPTD, ["serve"], { env: serverEnv(extra), stdio: ["pipe", "pipe", "ignore"] });
  const frames: unknown[] = [];
  let pending = Buffer.alloc(0);
  let arrived: (() => void) | undefined;
  child.stdout.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    let newline: number;
    while ((newline = pending.indexOf(0x0a)) !== -1) {
      frames.push(JSON.parse(pending.subarray(0, newline).toString("utf8")) as unknown);
      pending = pending.subarray(newline + 1);
    }
    arrived?.();
  });
  const closed = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  child.stdin.on("error", () => undefined); // the server may exit (an `exit` in the input) before reading the rest
  const deadline = Date.now() + WIRE_PATIENCE_MS;
  for (const item of vector.in) {
    if (typeof item === "string") {
      child.stdin.write(`${item}\n`);
    } else if ("raw" in item) {
      child.stdin.write(item.raw);
    } else if ("hex" in item) {
      child.stdin.write(Buffer.from(item.hex, "hex"));
    } else if ("fill" in item) {
      child.stdin.write(item.fill.repeat(item.times));
    } else {
      while (frames.length < item.await) {
        assert.ok(Date.now() < deadline, `${vector.description}: ${frames.length} frames, awaiting ${item.await}`);
        await new Promise<void>((resolve) => {
          arrived = resolve;
          setTimeout(resolve, 50);
        });
      }
    }
  }
  child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), WIRE_PATIENCE_MS);
  try {
    return { frames, code: await closed };
  } finally {
    clearTimeout(timer);
  }
}

/** An expected object matches when each of its members matches (the actual one may have more);
 * arrays element by element; anything else by equality. */
function wireMatches(want: unknown, got: unknown): boolean {
  if (Array.isArray(want)) {
    return Array.isArray(got) && got.length === want.length && want.every((item, i) => wireMatches(item, got[i]));
  }
  if (want !== null && typeof want === "object") {
    if (got === null || typeof got !== "object" || Array.isArray(got)) {
      return false;
    }
    const actual = got as Record<string, unknown>;
    return Object.entries(want as Record<string, unknown>).every(([key, value]) => key in actual && wireMatches(value, actual[key]));
  }
  return want === got;
}

/** The same number of items, each expected one matched by a different actual one, in any order. */
function unorderedMatch(want: unknown[], got: unknown[], match: (w: unknown, g: unknown) => boolean): boolean {
  if (want.length !== got.length) {
    return false;
  }
  const left = [...got];
  return want.every((item) => {
    const found = left.findIndex((candidate) => match(item, candidate));
    if (found === -1) {
      return false;
    }
    left.splice(found, 1);
    return true;
  });
}

/** A batch answer is an array whose members may come in any order. */
function frameMatches(want: unknown, got: unknown): boolean {
  if (Array.isArray(want)) {
    return Array.isArray(got) && unorderedMatch(want, got, wireMatches);
  }
  return wireMatches(want, got);
}

test("there are wire vectors to replay", () => {
  assert.ok(WIRE_CASES.length >= 20, `only ${WIRE_CASES.length} wire vectors found under ${WIRE}`);
});

// One server per vector (each vector ends its server), a few at a time.
describe("wire vectors", { concurrency: 4 }, () => {
  for (const { name, vector } of WIRE_CASES) {
    test(`wire vector ${name}: ${vector.description}`, async () => {
      const { frames, code } = await replayWire(vector);
      assert.ok(unorderedMatch(vector.out, frames, frameMatches), `got ${JSON.stringify(frames)}\nwant ${JSON.stringify(vector.out)}`);
      assert.equal(code, vector.exit_code ?? 0);
    });
  }
});
