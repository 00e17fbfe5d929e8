/**
 * The sidecar as a child process: spawning `promptd serve`, wiring its stdio to a Connection,
 * and ending it in order. The only module that touches child_process and signals.
 */

import { spawn, type ChildProcess } from "node:child_process";

import { Connection, type ConnectionOptions } from "./connection.js";
import { LineSplitter } from "./reader.js";

export interface SpawnOptions {
  /** The `promptd` executable; default `promptd` found on PATH. */
  command?: string;
  /** Default `["serve"]`. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * The sidecar's stderr (JSON-lines logs, metadata only): passed through to ours ("inherit",
   * the default), dropped, or handed over line by line.
   */
  stderr?: "inherit" | "ignore" | ((line: string) => void);
  connection?: ConnectionOptions;
}

/** How long each step of the ordered shutdown may take before the next, harsher one. */
export interface ShutdownOptions {
  /** For the `shutdown` request, which waits for in-flight work to drain. */
  shutdownTimeoutMs?: number;
  /** After `exit`, and again after closing stdin. */
  graceMs?: number;
  /** After SIGTERM. The server drains for up to 5 s (`shutdown_deadline_ms`) before it exits. */
  termGraceMs?: number;
}

// Defaults: generous enough for a loaded machine, short enough that a wedged sidecar never
// holds its host for long; the SIGTERM wait covers the server's own 5 s drain deadline.
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
const DEFAULT_GRACE_MS = 2_000;
const DEFAULT_TERM_GRACE_MS = 6_000;
const KILL_WAIT_MS = 5_000;

/** Which step ended the process: the polite `exit`, closing stdin, SIGTERM or SIGKILL. */
export type ShutdownStep = "exit" | "stdin" | "sigterm" | "sigkill" | "already";

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ShutdownResult extends ExitInfo {
  step: ShutdownStep;
}

export class SidecarProcess {
  readonly exited: Promise<ExitInfo>;
  private exitInfo: ExitInfo | undefined;
  private stopping: Promise<ShutdownResult> | undefined;

  private constructor(
    readonly child: ChildProcess,
    readonly connection: Connection,
  ) {
    this.exited = new Promise<ExitInfo>((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
  }

  /** Spawns the sidecar; rejects when it cannot be started (for example ENOENT). */
  static async spawn(options: SpawnOptions = {}): Promise<SidecarProcess> {
    const stderr = options.stderr ?? "inherit";
    const child = spawn(options.command ?? "promptd", options.args ?? ["serve"], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", typeof stderr === "function" ? "pipe" : stderr],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", () => resolve());
      child.once("error", reject);
    });
    const { stdin, stdout } = child;
    if (stdin === null || stdout === null) {
      throw new Error("the sidecar was spawned without pipes");
    }
    if (typeof stderr === "function" && child.stderr !== null) {
      forwardLines(child.stderr, stderr);
    }
    // After a successful spawn, a late "error" (a failed kill) must not crash the host.
    child.on("error", () => undefined);
    return new SidecarProcess(child, new Connection(stdout, stdin, options.connection ?? {}));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Set once the process has exited. */
  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /**
   * Ends the sidecar in order, each step only if the one before did not: the `shutdown` request
   * (the server drains in-flight work) and the `exit` notification; closing its stdin; SIGTERM;
   * SIGKILL. Calling it again returns the same outcome.
   */
  shutdown(options: ShutdownOptions = {}): Promise<ShutdownResult> {
    this.stopping ??= this.runShutdown(options);
    return this.stopping;
  }

  private async runShutdown(options: ShutdownOptions): Promise<ShutdownResult> {
    if (this.exitInfo !== undefined) {
      return { ...this.exitInfo, step: "already" };
    }
    const grace = options.graceMs ?? DEFAULT_GRACE_MS;
    const connection = this.connection;
    if (connection.state === "open") {
      try {
        await connection.sendRequest("shutdown", undefined, { timeoutMs: options.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS });
      } catch {
        // Refused, timed out or the pipe broke: `exit` is still worth a try, and the harsher
        // steps follow anyway.
      }
      await connection.sendNotification("exit").catch(() => undefined);
      if (await this.exitsWithin(grace)) {
        return this.outcome("exit");
      }
    }
    await connection.end().catch(() => undefined);
    if (await this.exitsWithin(grace)) {
      return this.outcome("stdin");
    }
    this.child.kill("SIGTERM");
    if (await this.exitsWithin(options.termGraceMs ?? DEFAULT_TERM_GRACE_MS)) {
      return this.outcome("sigterm");
    }
    this.child.kill("SIGKILL");
    await this.exitsWithin(KILL_WAIT_MS);
    return this.outcome("sigkill");
  }

  private outcome(step: ShutdownStep): ShutdownResult {
    const info = this.exitInfo ?? { code: null, signal: null };
    return { ...info, step };
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    if (this.exitInfo !== undefined) {
      return true;
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([this.exited.then(() => true), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function forwardLines(stream: NodeJS.ReadableStream, deliver: (line: string) => void): void {
  // The logs are bounded by the server; this cap only keeps a misbehaving child from growing
  // our memory without end.
  const splitter = new LineSplitter(1024 * 1024);
  const emit = (pieces: ReturnType<LineSplitter["push"]>): void => {
    for (const piece of pieces) {
      if (piece.kind === "line") {
        deliver(piece.text);
      }
    }
  };
  stream.on("data", (chunk: Buffer) => emit(splitter.push(chunk)));
  stream.on("end", () => emit(splitter.finish()));
  stream.on("error", () => undefined);
}
