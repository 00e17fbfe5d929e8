#!/usr/bin/env node
// A quick measure of the client over a real sidecar (not a test): cold start to the first
// answer, sequential round trips (p50/p99) and pipelined throughput. Needs `make build` first.
//   node scripts/bench.mjs [/path/to/promptd] [requests]
import { performance } from "node:perf_hooks";

import { PromptdClient } from "../dist/src/index.js";

const command = process.argv[2] ?? process.env.PROMPTD ?? "promptd";
const count = Number(process.argv[3] ?? 5000);
const env = { ...process.env, PROMPTD_LOG_LEVEL: "warning" };

const coldStart = performance.now();
const client = await PromptdClient.start({ command, env });
await client.reminderWrap({ key: "session.cwd", body: "/tmp" });
const cold = performance.now() - coldStart;

const times = [];
for (let i = 0; i < count; i++) {
  const t = performance.now();
  await client.reminderWrap({ key: "session.cwd", body: `/tmp/${i}` });
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
const pct = (p) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];

const pipeStart = performance.now();
await Promise.all(Array.from({ length: count }, (_, i) => client.reminderWrap({ key: "session.cwd", body: `/tmp/${i}` })));
const pipelined = count / ((performance.now() - pipeStart) / 1000);

await client.stop();
console.log(`cold start (spawn + initialize) to first answer: ${cold.toFixed(1)} ms`);
console.log(`sequential round trip: p50 ${(pct(50) * 1000).toFixed(0)} us, p99 ${(pct(99) * 1000).toFixed(0)} us (${count} requests)`);
console.log(`pipelined: ${pipelined.toFixed(0)} requests/s (${count} in flight at once)`);
