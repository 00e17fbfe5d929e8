/** The client against a real `promptd serve`: lifecycle, errors, concurrency, closed connections. */

import assert from "node:assert/strict";
import { test } from "node:test";

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

import {
  ConnectionClosedError,
  ConnectionError,
  DEFAULT_MAX_MESSAGE_BYTES,
  ErrorCodes,
  MessageTooLargeError,
  PROTOCOL_VERSION,
  PromptdClient,
  ProtocolVersionError,
  ResponseError,
  StartError,
  type Config,
  type ExitInfo,
  type StartOptions,
} from "../src/index.js";
import { SidecarProcess } from "../src/process.js";
import { CLIENT_ROOT, PROMPTD, serverEnv, startClient } from "./support/env.js";

test("start initializes: the server names itself, speaks our protocol version and lists its methods", async () => {
  const { client } = await startClient({ clientInfo: { name: "node-tests", version: "1" } });
  try {
    const info = client.initializeResult;
    assert.ok(info !== undefined);
    assert.equal(info.server_info.name, "promptd");
    assert.equal(info.protocol_version, PROTOCOL_VERSION);
    for (const method of ["initialize", "shutdown", "reminder/wrap", "rpc.discover"]) {
      assert.ok(client.serverMethods.includes(method), `${method} missing from initialize`);
    }
  } finally {
    await client.stop();
  }
});

test("a protocol version the server answers differently fails start with an error naming both, and leaves no process", async () => {
  let pid: number | undefined;
  const error = await startClient({ protocolVersion: "1999-01-01", onExit: () => undefined, onStderr: () => undefined })
    .then(({ client }) => {
      pid = client.pid;
      return client;
    })
    .catch((caught: unknown) => caught);
  assert.ok(error instanceof ProtocolVersionError, String(error));
  assert.ok(error instanceof StartError);
  assert.equal(error.requested, "1999-01-01");
  assert.equal(error.offered, PROTOCOL_VERSION);
  assert.match(error.message, new RegExp(`1999-01-01.*${PROTOCOL_VERSION}`));
  assert.equal(pid, undefined);
});

/** Start's error for a sidecar that fails, or the client when it (wrongly) started. */
async function failedStart(options: Parameters<typeof PromptdClient.start>[0]): Promise<unknown> {
  return PromptdClient.start(options).then(
    async (client) => {
      await client.stop();
      return client;
    },
    (error: unknown) => error,
  );
}

test("a bad configuration fails start with the exit status and the server's own stderr line", async () => {
  const error = await failedStart({ command: PROMPTD, env: serverEnv({ PROMPTD_LOG_LEVEL: "bogus" }) });
  assert.ok(error instanceof StartError, String(error));
  assert.deepEqual(error.exit, { code: 2, signal: null });
  assert.ok(error.stderr.some((line) => line.includes("invalid config at log_level")), JSON.stringify(error.stderr));
  assert.match(error.message, /promptd did not start: .*exited with status 2.*\n.*invalid config at log_level/s);
  assert.doesNotMatch(error.message, /^the peer closed the connection$/);
});

test("events are typed as the closed set EventName, and a misspelt one fails start with -32602 instead of never arriving", async () => {
  // @ts-expect-error: "event/gate_fird" is not an EventName; the compiler catches the typo.
  const misspelt: StartOptions["events"] = ["event/gate_fird"];
  const error = await failedStart({ command: PROMPTD, env: serverEnv(), events: misspelt });
  assert.ok(error instanceof StartError, String(error));
  assert.ok(error.cause instanceof ResponseError, String(error.cause));
  assert.equal(error.cause.code, ErrorCodes.InvalidParams);
  assert.equal(error.cause.kind, "invalid_params");
  assert.match(JSON.stringify(error.cause.data), /capabilities\.events.*event\/gate_fird/);
  const { client } = await startClient({ events: ["event/gate_fired"] });
  await client.stop();
});

test("config is typed as promptd.toml's shape: a misspelt setting does not compile, and the server refuses it (invalid_config)", async () => {
  // @ts-expect-error: todo_gat is not a section of Config.
  const misspelt: Config = { todo_gat: { enabled: true } };
  const error = await failedStart({ command: PROMPTD, env: serverEnv(), config: misspelt });
  assert.ok(error instanceof StartError, String(error));
  assert.ok(error.cause instanceof ResponseError, String(error.cause));
  assert.equal(error.cause.kind, "invalid_config");
  const { client } = await startClient({ config: { todo_gate: { enabled: true, max_fires_per_prompt: 1 }, reminders: { style: "xml" } } });
  try {
    const gate = await client.todoGate({ session: "s", prompt_id: "p", todos: [{ id: "1", content: "x", status: "pending" }], last_step_called_tool: false });
    assert.equal(gate.decision, "nudge");
    assert.match(gate.reminder ?? "", /^<system-reminder/);
  } finally {
    await client.stop();
  }
});

test("a missing config file fails start saying which file", async () => {
  const error = await failedStart({ command: PROMPTD, env: serverEnv({ PROMPTD_CONFIG: "/nonexistent/promptd.toml" }) });
  assert.ok(error instanceof StartError, String(error));
  assert.match(error.message, /status 2.*cannot read config file \/nonexistent\/promptd\.toml/s);
});

test("an executable that does not exist fails start naming it and the reason, with no process left behind", async () => {
  const error = await failedStart({ command: "/nonexistent/promptd" });
  assert.ok(error instanceof StartError, String(error));
  assert.equal(error.code, "ENOENT");
  assert.match(error.message, /could not run \/nonexistent\/promptd: no such file/);
});

test("a missing module (a broken install) fails start with the interpreter's own message", async () => {
  const python = join(dirname(PROMPTD), "python");
  const [command, args, expected] = existsSync(python)
    ? [python, ["-m", "promptd_no_such_module"], /No module named promptd_no_such_module/]
    : [process.execPath, ["--input-type=module", "-e", "import 'promptd-no-such-module'"], /Cannot find package 'promptd-no-such-module'/];
  const error = await failedStart({ command, args });
  assert.ok(error instanceof StartError, String(error));
  assert.equal(error.exit?.code, 1);
  assert.match(error.message, expected);
});

test("the client exposes the sidecar's pid, and onExit and onClose report its end once", async () => {
  const exits: ExitInfo[] = [];
  const closes: Array<Error | undefined> = [];
  const { client } = await startClient({ onExit: (exit) => exits.push(exit), onClose: (error) => closes.push(error) });
  const pid = client.pid;
  assert.equal(typeof pid, "number");
  assert.equal(pid, client.process?.child.pid);
  process.kill(pid ?? 0, 0); // alive
  await client.stop();
  await client.stop();
  assert.deepEqual(exits, [{ code: 0, signal: null }]);
  assert.equal(closes.length, 1);
});

test("when the sidecar is killed, onExit hears the signal and calls fail with ConnectionClosedError naming it", async () => {
  const exits: ExitInfo[] = [];
  const { client } = await startClient({ onExit: (exit) => exits.push(exit) });
  client.process?.child.kill("SIGKILL");
  await client.process?.exited;
  const error = await client.reminderKeys().catch((caught: unknown) => caught);
  assert.ok(error instanceof ConnectionClosedError, String(error));
  assert.match(error.message, /killed by SIGKILL/);
  assert.deepEqual(exits, [{ code: null, signal: "SIGKILL" }]);
  await client.stop();
});

test("the sidecar's stderr does not reach the host's stderr by default", async () => {
  const entry = pathToFileURL(join(CLIENT_ROOT, "dist", "src", "index.js")).href;
  const script = `const { PromptdClient } = await import(${JSON.stringify(entry)});
const client = await PromptdClient.start({ command: ${JSON.stringify(PROMPTD)} });
await client.reminderKeys();
const tail = client.stderrTail();
await client.stop();
process.stdout.write(JSON.stringify(tail));`;
  const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    execFile(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, PROMPTD_LOG_LEVEL: "info" } }, (error, out, err) =>
      error ? reject(error) : resolve({ stdout: out, stderr: err }),
    );
  });
  assert.equal(stderr, "");
  const tail = JSON.parse(stdout) as string[];
  assert.ok(tail.some((line) => line.includes('"started"')), stdout);
});

test("requests over the message limit are refused before sending; the limit follows config.max_message_bytes", async () => {
  assert.equal(DEFAULT_MAX_MESSAGE_BYTES, 16 * 1024 * 1024);
  const { client } = await startClient({ config: { max_message_bytes: 4096 } });
  try {
    const error = await client.reminderWrap({ key: "k", body: "x".repeat(5000) }).catch((caught: unknown) => caught);
    assert.ok(error instanceof MessageTooLargeError, String(error));
    assert.equal(error.limit, 4096);
    const fits = await client.reminderWrap({ key: "k", body: "x".repeat(3000) });
    assert.ok(fits.text.includes("x".repeat(3000)));
  } finally {
    await client.stop();
  }
});

test("the client follows the limit the server reports, also one set in the server's own environment", async () => {
  const { client } = await startClient({ env: serverEnv({ PROMPTD_MAX_MESSAGE_BYTES: "4096" }) });
  try {
    assert.equal(client.initializeResult?.limits.max_message_bytes, 4096);
    const error = await client.reminderWrap({ key: "k", body: "x".repeat(5000) }).catch((caught: unknown) => caught);
    assert.ok(error instanceof MessageTooLargeError, String(error));
    assert.equal(error.limit, 4096);
  } finally {
    await client.stop();
  }
});

test("the default limit refuses a request over 16 MiB without sending it", async () => {
  const { client } = await startClient();
  try {
    const error = await client.contentSanitize({ text: "a".repeat(DEFAULT_MAX_MESSAGE_BYTES) }).catch((caught: unknown) => caught);
    assert.ok(error instanceof MessageTooLargeError, String(error));
    assert.equal(error.limit, DEFAULT_MAX_MESSAGE_BYTES);
    assert.equal((await client.reminderWrap({ key: "k", body: "b" })).text, '<system-reminder key="k">\nb\n</system-reminder>');
  } finally {
    await client.stop();
  }
});

test("a second initialize is refused with already_initialized", async () => {
  const { client } = await startClient();
  try {
    await assert.rejects(client.initialize({}), (error: unknown) => error instanceof ResponseError && error.kind === "already_initialized");
  } finally {
    await client.stop();
  }
});

test("errors arrive as ResponseError with code, message and data.kind, never as connection errors", async () => {
  const { client } = await startClient();
  try {
    const invalid = await client.reminderWrap({ key: "k" } as { key: string; body: string }).catch((error: unknown) => error);
    assert.ok(invalid instanceof ResponseError && !(invalid instanceof ConnectionError));
    assert.equal(invalid.code, ErrorCodes.InvalidParams);
    assert.equal(invalid.kind, "invalid_params");
    assert.ok(typeof invalid.message === "string" && invalid.message.length > 0);
    const missing = await client.request("no/such_method", {}).catch((error: unknown) => error);
    assert.ok(missing instanceof ResponseError);
    assert.equal(missing.code, ErrorCodes.MethodNotFound);
    assert.equal(missing.kind, "method_not_found");
    const nested = await client.reminderWrap({ key: "k", body: "</system-reminder>" }).catch((error: unknown) => error);
    assert.ok(nested instanceof ResponseError);
    assert.equal(nested.code, -32011);
    assert.equal(nested.kind, "nested_marker");
    // The connection is unharmed by any of it.
    assert.equal((await client.reminderWrap({ key: "k", body: "" })).text, '<system-reminder key="k">\n\n</system-reminder>');
  } finally {
    await client.stop();
  }
});

test("hundreds of concurrent requests each get their own answer", async () => {
  const { client } = await startClient();
  try {
    const bodies = Array.from({ length: 300 }, (_, i) => `body ${i} ${"&".repeat(i % 7)}`);
    const results = await Promise.all(bodies.map((body, i) => client.reminderWrap({ key: `k${i}`, body })));
    results.forEach((result, i) => {
      const body = (bodies[i] ?? "").replace(/&/g, "&amp;");
      assert.equal(result.text, `<system-reminder key="k${i}">\n${body}\n</system-reminder>`);
    });
  } finally {
    await client.stop();
  }
});

test("rpc.discover returns the OpenRPC document the types were generated from", async () => {
  const { client } = await startClient();
  try {
    const doc = await client.rpcDiscover();
    assert.match(doc.openrpc, /^1\./);
    assert.equal(doc["x-protocol-version"], PROTOCOL_VERSION);
  } finally {
    await client.stop();
  }
});

test("the ordered shutdown ends a healthy server at its first step, with exit code 0", async () => {
  const { client } = await startClient();
  const outcome = await client.stop();
  assert.deepEqual(outcome, { code: 0, signal: null, step: "exit" });
  assert.equal(client.connection.state, "closed");
  assert.deepEqual(await client.stop(), outcome, "stopping twice gives the same outcome");
});

test("after a raw shutdown the server's -32002 refusals reach the caller as ConnectionClosedError, and exit ends it with 0", async () => {
  const { client } = await startClient();
  await client.request("shutdown");
  const refused = await client.reminderKeys().catch((error: unknown) => error);
  assert.ok(refused instanceof ConnectionClosedError, String(refused));
  assert.ok(refused.cause instanceof ResponseError && refused.cause.code === ErrorCodes.ServerShutDown);
  await client.notify("exit", {});
  const exit = await client.process?.exited;
  assert.deepEqual(exit, { code: 0, signal: null });
});

test("exit without shutdown ends the server with 1, as the lifecycle says", async () => {
  const { client } = await startClient();
  await client.notify("exit", {});
  assert.deepEqual(await client.process?.exited, { code: 1, signal: null });
});

test("closing the server's stdin ends it cleanly with 0", async () => {
  const sidecar = await SidecarProcess.spawn({ command: PROMPTD, env: serverEnv() });
  await sidecar.connection.end();
  assert.deepEqual(await sidecar.exited, { code: 0, signal: null });
});

test("when the server dies, requests fail with ConnectionClosedError, not a hang", async () => {
  const { client } = await startClient();
  client.process?.child.kill("SIGKILL");
  await client.process?.exited;
  await assert.rejects(client.reminderKeys(), ConnectionClosedError);
  assert.equal((await client.stop()).step, "already");
});

test("the server's stderr logs reach the host line by line, and stdout carries only frames", async () => {
  const { client, stderr } = await startClient({ env: serverEnv({ PROMPTD_LOG_LEVEL: "info" }) });
  await client.stop();
  assert.ok(stderr.length > 0);
  for (const line of stderr) {
    assert.equal(typeof (JSON.parse(line) as { event?: unknown }).event, "string");
  }
});
