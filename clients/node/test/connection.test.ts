import assert from "node:assert/strict";
import { test } from "node:test";

import {
  CANCEL_METHOD,
  ConnectionClosedError,
  ConnectionDisposedError,
  ConnectionError,
  ErrorCodes,
  ProtocolError,
  RequestTimeoutError,
  ResponseError,
  type Id,
} from "../src/index.js";
import { FakePeer } from "./support/fake.js";

test("replies that arrive out of order settle the requests they answer", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const first = connection.sendRequest("m", { n: 1 });
  const second = connection.sendRequest("m", { n: 2 });
  const a = await peer.nextCall("m");
  const b = await peer.nextCall("m");
  peer.reply(b["id"], "second");
  peer.reply(a["id"], "first");
  assert.deepEqual(await Promise.all([first, second]), ["first", "second"]);
  assert.equal(connection.pendingCount, 0);
});

test("an error reply rejects with a ResponseError carrying code, message and data", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const call = connection.sendRequest("reminder/wrap", { key: "bad key", body: "" });
  const frame = await peer.nextCall("reminder/wrap");
  peer.fail(frame["id"], -32010, "bad key", { kind: "invalid_key" });
  const error = await call.then(
    () => assert.fail("expected a rejection"),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof ResponseError);
  assert.ok(!(error instanceof ConnectionError));
  assert.equal(error.code, -32010);
  assert.equal(error.kind, "invalid_key");
  assert.deepEqual(error.data, { kind: "invalid_key" });
  assert.deepEqual(error.toJSON(), { code: -32010, message: "bad key", data: { kind: "invalid_key" } });
});

test("a timeout rejects, sends $/cancelRequest for that id, and the late reply goes to the unmatched handler", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const late: Array<{ id: Id | null; code: number | undefined }> = [];
  connection.onUnmatchedResponse((response) => late.push({ id: response.id, code: response.error?.code }));
  const call = connection.sendRequest("slow", {}, { timeoutMs: 30 });
  const request = await peer.nextCall("slow");
  await assert.rejects(call, (error: unknown) => error instanceof RequestTimeoutError && error.timeoutMs === 30 && error.method === "slow");
  const cancel = await peer.nextCall(CANCEL_METHOD);
  assert.deepEqual(cancel["params"], { id: request["id"] });
  assert.equal("id" in cancel, false, "$/cancelRequest is a notification");
  peer.fail(request["id"], ErrorCodes.RequestCancelled, "Request cancelled", { kind: "cancelled" });
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(late, [{ id: request["id"], code: ErrorCodes.RequestCancelled }]);
});

test("the connection's default timeout applies to requests that set none", async () => {
  const peer = new FakePeer();
  const connection = peer.connect({ defaultTimeoutMs: 20 });
  await assert.rejects(connection.sendRequest("slow"), RequestTimeoutError);
});

test("aborting a signal sends $/cancelRequest and rejects with the signal's reason", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const controller = new AbortController();
  const call = connection.sendRequest("slow", {}, { signal: controller.signal });
  const request = await peer.nextCall("slow");
  const reason = new Error("the user pressed stop");
  controller.abort(reason);
  await assert.rejects(call, (error: unknown) => error === reason);
  const cancel = await peer.nextCall(CANCEL_METHOD);
  assert.deepEqual(cancel["params"], { id: request["id"] });
  assert.equal(connection.pendingCount, 0);
});

test("an already aborted signal sends nothing at all", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  await assert.rejects(connection.sendRequest("m", {}, { signal: AbortSignal.abort() }), { name: "AbortError" });
  await connection.sendNotification("marker");
  const frame = await peer.next();
  assert.equal(frame["method"], "marker");
});

test("a reply that wins the race against the timeout settles the request once", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const call = connection.sendRequest("m", {}, { timeoutMs: 200 });
  const request = await peer.nextCall("m");
  peer.reply(request["id"], 42);
  assert.equal(await call, 42);
  await new Promise((resolve) => setTimeout(resolve, 250));
  assert.equal(peer.received.some((frame) => frame["method"] === CANCEL_METHOD), false);
});

test("when the peer hangs up, waiting requests and later ones fail with ConnectionClosedError", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  let closed = false;
  connection.onClose(() => {
    closed = true;
  });
  const call = connection.sendRequest("m");
  await peer.nextCall("m");
  peer.hangUp();
  await assert.rejects(call, ConnectionClosedError);
  assert.equal(connection.state, "closed");
  assert.equal(closed, true);
  await assert.rejects(connection.sendRequest("m"), ConnectionClosedError);
  await assert.rejects(connection.sendNotification("n"), ConnectionClosedError);
});

test("disposing abandons waiting requests with ConnectionDisposedError and refuses new ones", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const call = connection.sendRequest("m");
  await peer.nextCall("m");
  connection.dispose();
  await assert.rejects(call, ConnectionDisposedError);
  await assert.rejects(connection.sendRequest("m"), ConnectionDisposedError);
  assert.equal(connection.state, "disposed");
});

test("a batch reply (an array) settles each request in it", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const calls = [connection.sendRequest("a"), connection.sendRequest("b")];
  const a = await peer.nextCall("a");
  const b = await peer.nextCall("b");
  peer.send([
    { jsonrpc: "2.0", id: b["id"], result: "B" },
    { jsonrpc: "2.0", id: a["id"], error: { code: -32601, message: "Method not found", data: { kind: "method_not_found" } } },
  ]);
  const [first, second] = await Promise.allSettled(calls);
  assert.equal(first?.status, "rejected");
  assert.deepEqual(second, { status: "fulfilled", value: "B" });
});

test("an id-null error (the server could not read a line) reaches the unmatched handler", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const seen = new Promise<{ id: Id | null; kind: string | undefined }>((resolve) => {
    connection.onUnmatchedResponse((response) => resolve({ id: response.id, kind: response.error?.kind }));
  });
  peer.fail(null, ErrorCodes.ParseError, "Parse error", { kind: "parse_error" });
  assert.deepEqual(await seen, { id: null, kind: "parse_error" });
});

test("garbage from the peer is reported as a ProtocolError and the connection keeps working", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const errors: Error[] = [];
  connection.onError((error) => errors.push(error));
  const call = connection.sendRequest("m");
  const request = await peer.nextCall("m");
  peer.sendRaw("this is not json\n\n");
  peer.send({ jsonrpc: "1.0", id: 5 });
  peer.send(17);
  peer.reply(request["id"], "still fine");
  assert.equal(await call, "still fine");
  assert.equal(errors.length, 3);
  assert.ok(errors.every((error) => error instanceof ProtocolError));
});

test("an over-long line from the peer is dropped and reported, and the next line is served", async () => {
  const peer = new FakePeer();
  const connection = peer.connect({ maxLineBytes: 64 });
  const errors: Error[] = [];
  connection.onError((error) => errors.push(error));
  const call = connection.sendRequest("m");
  const request = await peer.nextCall("m");
  peer.reply(request["id"], "y".repeat(200));
  peer.reply(request["id"], "short");
  assert.equal(await call, "short");
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof ProtocolError);
});

test("requests from the peer are answered by their handler, with its result", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  connection.onRequest("test/question", async (params) => ({ echoed: params }));
  peer.send({ jsonrpc: "2.0", id: "promptd-1", method: "test/question", params: { q: 1 } });
  const reply = await peer.next((frame) => frame["id"] === "promptd-1");
  assert.deepEqual(reply, { jsonrpc: "2.0", id: "promptd-1", result: { echoed: { q: 1 } } });
});

test("a request from the peer with no handler is answered -32601", async () => {
  const peer = new FakePeer();
  peer.connect();
  peer.send({ jsonrpc: "2.0", id: "promptd-2", method: "nobody/home", params: {} });
  const reply = await peer.next((frame) => frame["id"] === "promptd-2");
  const error = reply["error"] as { code: number; data: { kind: string } };
  assert.equal(error.code, ErrorCodes.MethodNotFound);
  assert.equal(error.data.kind, "method_not_found");
});

test("a handler that throws is answered -32603 without its message, and the host hears the detail", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const errors: Error[] = [];
  connection.onError((error) => errors.push(error));
  connection.onRequest("boom", () => {
    throw new Error("private detail");
  });
  peer.send({ jsonrpc: "2.0", id: "promptd-3", method: "boom" });
  const reply = await peer.next((frame) => frame["id"] === "promptd-3");
  const error = reply["error"] as { code: number; message: string; data: { kind: string } };
  assert.equal(error.code, ErrorCodes.InternalError);
  assert.equal(error.data.kind, "internal");
  assert.ok(!JSON.stringify(reply).includes("private detail"));
  assert.equal(errors[0]?.message, "private detail");
});

test("a handler whose result cannot be encoded still gets exactly one reply, -32603", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const errors: Error[] = [];
  connection.onError((error) => errors.push(error));
  connection.onRequest("big", () => ({ n: 10n }));
  peer.send({ jsonrpc: "2.0", id: "promptd-5", method: "big" });
  const reply = await peer.next((frame) => frame["id"] === "promptd-5");
  assert.equal((reply["error"] as { code: number }).code, ErrorCodes.InternalError);
  assert.ok(errors[0] instanceof TypeError);
});

test("a handler that throws a ResponseError is answered with exactly that error", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  connection.onRequest("picky", () => {
    throw new ResponseError(-32050, "no such session", { kind: "unknown_session" });
  });
  peer.send({ jsonrpc: "2.0", id: 9, method: "picky" });
  const reply = await peer.next((frame) => frame["id"] === 9);
  assert.deepEqual(reply["error"], { code: -32050, message: "no such session", data: { kind: "unknown_session" } });
});

test("the peer cancelling its request aborts the handler's signal and is answered -32800", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  let aborted = false;
  connection.onRequest("wait", (_params, context) => {
    return new Promise((_resolve, reject) => {
      context.signal.addEventListener("abort", () => {
        aborted = true;
        reject(new Error("stopped"));
      });
    });
  });
  peer.send({ jsonrpc: "2.0", id: "promptd-4", method: "wait" });
  await new Promise((resolve) => setImmediate(resolve));
  peer.send({ jsonrpc: "2.0", method: CANCEL_METHOD, params: { id: "promptd-4" } });
  const reply = await peer.next((frame) => frame["id"] === "promptd-4");
  assert.equal(aborted, true);
  assert.equal((reply["error"] as { code: number }).code, ErrorCodes.RequestCancelled);
});

test("notifications reach handlers for their method and catch-all handlers", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const specific: unknown[] = [];
  const all: string[] = [];
  connection.onNotification("event/gate_fired", (params) => specific.push(params));
  const subscription = connection.onNotification(undefined, (_params, method) => all.push(method));
  peer.send({ jsonrpc: "2.0", method: "event/gate_fired", params: { session: "s" } });
  peer.send({ jsonrpc: "2.0", method: "event/spilled", params: {} });
  await new Promise((resolve) => setTimeout(resolve, 20));
  subscription.dispose();
  peer.send({ jsonrpc: "2.0", method: "event/spilled", params: {} });
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(specific, [{ session: "s" }]);
  assert.deepEqual(all, ["event/gate_fired", "event/spilled"]);
});

test("a notification handler that throws does not stop the connection", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const errors: Error[] = [];
  connection.onError((error) => errors.push(error));
  connection.onNotification("n", () => {
    throw new Error("listener bug");
  });
  peer.send({ jsonrpc: "2.0", method: "n" });
  const call = connection.sendRequest("m");
  const request = await peer.nextCall("m");
  peer.reply(request["id"], true);
  assert.equal(await call, true);
  assert.equal(errors[0]?.message, "listener bug");
});

test("request ids are never reused, so a late reply can never settle a newer request", async () => {
  const peer = new FakePeer();
  const connection = peer.connect();
  const ids = new Set<unknown>();
  for (let i = 0; i < 5; i++) {
    const call = connection.sendRequest("m", {}, { timeoutMs: 1 });
    ids.add((await peer.nextCall("m"))["id"]);
    await call.catch(() => undefined);
  }
  assert.equal(ids.size, 5);
});

test("trace sees every line both ways, in order, and a trace that throws is reported, not fatal", async () => {
  const peer = new FakePeer();
  const seen: Array<[string, string]> = [];
  let throwing = false;
  const connection = peer.connect({
    trace: (direction, line) => {
      seen.push([direction, line]);
      if (throwing) {
        throw new Error("trace failed");
      }
    },
  });
  const errors: Error[] = [];
  connection.onError((error) => errors.push(error));
  const call = connection.sendRequest("m", { n: 1 });
  const frame = await peer.nextCall("m");
  peer.reply(frame["id"], "ok");
  assert.equal(await call, "ok");
  assert.deepEqual(
    seen.map(([direction, line]) => [direction, JSON.parse(line)]),
    [
      ["sent", { jsonrpc: "2.0", id: frame["id"], method: "m", params: { n: 1 } }],
      ["received", { jsonrpc: "2.0", id: frame["id"], result: "ok" }],
    ],
  );
  throwing = true;
  const second = connection.sendRequest("m", { n: 2 });
  const again = await peer.nextCall("m");
  peer.reply(again["id"], "still ok");
  assert.equal(await second, "still ok");
  assert.deepEqual(
    errors.map((error) => error.message),
    ["trace failed", "trace failed"],
  );
});
