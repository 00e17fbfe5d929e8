import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { test } from "node:test";

import { ConnectionClosedError } from "../src/errors.js";
import { MessageWriter } from "../src/writer.js";

test("messages are written one line each, in order, never interleaved", async () => {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk.toString("utf8")));
  const writer = new MessageWriter(out);
  const big = "x".repeat(100_000);
  await Promise.all([
    writer.write({ jsonrpc: "2.0", method: "a", params: { big } }),
    writer.write({ jsonrpc: "2.0", method: "b" }),
    writer.write({ jsonrpc: "2.0", id: 3, method: "c" }),
  ]);
  const lines = chunks.join("").split("\n");
  assert.equal(lines.pop(), "");
  assert.deepEqual(
    lines.map((line) => (JSON.parse(line) as { method: string }).method),
    ["a", "b", "c"],
  );
});

test("back-pressure queues frames until the stream drains, and every write still resolves", async () => {
  const received: string[] = [];
  const slow = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk.toString("utf8"));
      setTimeout(done, 1);
    },
  });
  const writer = new MessageWriter(slow);
  await Promise.all(Array.from({ length: 50 }, (_, i) => writer.write({ jsonrpc: "2.0", id: i, method: "m" })));
  const ids = received.join("").trimEnd().split("\n").map((line) => (JSON.parse(line) as { id: number }).id);
  assert.deepEqual(ids, Array.from({ length: 50 }, (_, i) => i));
});

test("a lone surrogate is sent as an escape, so the line stays valid UTF-8", async () => {
  const out = new PassThrough();
  const writer = new MessageWriter(out);
  await writer.write({ jsonrpc: "2.0", method: "m", params: { text: "a\ud800b" } });
  const line = (out.read() as Buffer).toString("utf8");
  assert.ok(line.includes("\\ud800"));
});

test("a value JSON cannot encode is refused without writing anything", async () => {
  const out = new PassThrough();
  const writer = new MessageWriter(out);
  await assert.rejects(writer.write({ jsonrpc: "2.0", method: "m", params: { n: 1n } }), TypeError);
  assert.equal(out.read(), null);
});

test("writes after the stream closed are refused with a connection-closed error", async () => {
  const out = new PassThrough();
  const writer = new MessageWriter(out);
  out.destroy();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(writer.closed, true);
  await assert.rejects(writer.write({ jsonrpc: "2.0", method: "m" }), ConnectionClosedError);
});

test("ending flushes what is queued, then refuses new frames", async () => {
  const out = new PassThrough();
  const writer = new MessageWriter(out);
  const first = writer.write({ jsonrpc: "2.0", method: "before" });
  await writer.end();
  await first;
  assert.match((out.read() as Buffer).toString("utf8"), /"before"/);
  await assert.rejects(writer.write({ jsonrpc: "2.0", method: "after" }), ConnectionClosedError);
});
