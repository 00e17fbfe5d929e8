import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { test } from "node:test";

import { LineReader, LineSplitter, type Piece } from "../src/reader.js";

function lines(pieces: Piece[]): string[] {
  return pieces.map((piece) => (piece.kind === "line" ? piece.text : `<oversize ${piece.bytes}>`));
}

test("a line split across chunks is delivered once, whole", () => {
  const splitter = new LineSplitter();
  assert.deepEqual(lines(splitter.push(Buffer.from('{"a":'))), []);
  assert.deepEqual(lines(splitter.push(Buffer.from('1}\n{"b":2}\n{"c"'))), ['{"a":1}', '{"b":2}']);
  assert.deepEqual(lines(splitter.push(Buffer.from(":3}\n"))), ['{"c":3}']);
});

test("a trailing carriage return is dropped, as the server tolerates it too", () => {
  assert.deepEqual(lines(new LineSplitter().push(Buffer.from("one\r\ntwo\n"))), ["one", "two"]);
});

test("a multi-byte character split between chunks decodes intact", () => {
  const bytes = Buffer.from("κλειδί 🙂\n", "utf8");
  const splitter = new LineSplitter();
  const out = [...splitter.push(bytes.subarray(0, 3)), ...splitter.push(bytes.subarray(3, 13)), ...splitter.push(bytes.subarray(13))];
  assert.deepEqual(lines(out), ["κλειδί 🙂"]);
});

test("a line over the limit is reported by size and the next line is still delivered", () => {
  const splitter = new LineSplitter(8);
  const out = [...splitter.push(Buffer.from("0123456")), ...splitter.push(Buffer.from("789abc\nok\n"))];
  assert.deepEqual(lines(out), ["<oversize 13>", "ok"]);
});

test("an unterminated last line is delivered when the stream ends", () => {
  const splitter = new LineSplitter();
  assert.deepEqual(lines(splitter.push(Buffer.from("a\nlast"))), ["a"]);
  assert.deepEqual(lines(splitter.finish()), ["last"]);
  assert.deepEqual(lines(splitter.finish()), []);
});

test("the line reader reports lines then the end of its stream, once", async () => {
  const stream = new PassThrough();
  const seen: string[] = [];
  const ended = new Promise<Error | undefined>((resolve) => {
    new LineReader(stream, { line: (text) => seen.push(text), oversize: () => seen.push("oversize"), end: resolve });
  });
  stream.write("x\ny");
  stream.end("\nz");
  assert.equal(await ended, undefined);
  assert.deepEqual(seen, ["x", "y", "z"]);
});

test("a failing stream ends the reader with its error", async () => {
  const stream = new PassThrough();
  const ended = new Promise<Error | undefined>((resolve) => {
    new LineReader(stream, { line: () => undefined, oversize: () => undefined, end: resolve });
  });
  stream.destroy(new Error("broken pipe"));
  const error = await ended;
  assert.ok(error instanceof Error);
  assert.equal(error.message, "broken pipe");
});
