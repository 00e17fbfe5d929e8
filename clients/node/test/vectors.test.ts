/** Replays every shared vector (protocol/vectors/*\/*.json) against a real sidecar: the same
 * files the Python and Go suites replay. */

import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { PromptdClient, ResponseError } from "../src/index.js";
import { startClient, VECTORS } from "./support/env.js";

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
    if (!statSync(folder).isDirectory()) {
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
