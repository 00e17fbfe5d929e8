/**
 * The sidecar as a child process: spawning `promptd serve`, wiring its stdio to a Connection,
 * and ending it in order. The only module that touches child_process and signals.
 */

import { spawn, type ChildProcess } from "node:child_process";

import { Connection, type ConnectionOptions } from "./connection.js";
import { StartError, type SidecarReport } from "./errors.js";
import { StderrTail } from "./stderr.js";

export interface SpawnOptions {
  /** The `promptd` executable; default `promptd` found on PATH. */
  command?: string;
  /** Default `["serve"]`. */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /**
   * Each line of the sidecar's stderr (JSON-lines logs, metadata only), for a logger. Whatever
   * this does, the last lines are kept (`stderrTail()`) for error messages, and nothing is
   * copied to the host's own stderr.
   */
  onStderr?: (line: string) => void;
  /** How many of the last stderr lines to keep (default 50) and their byte bound (default 16 KiB). */
  stderrLines?: number;
  stderrBytes?: number;
  /** The wait of each step of the ordered shutdown (default 5000 ms); `stop()` may override it. */
  graceMs?: number;
  connection?: ConnectionOptions;
}

/** How long each step of the ordered shutdown may take before the next, harsher one. */
export interface ShutdownOptions {
  /**
   * One wait per step (default 5000 ms): for the `shutdown` reply, then after `exit` and closing
   * stdin, then after SIGTERM (the server drains for up to `shutdown_deadline_ms`, 5 s), then
   * after SIGKILL.
   */
  graceMs?: number;
}

/** The wait of each shutdown step, by default. */
export const DEFAULT_GRACE_MS = 5_000;
// How long a failed start waits for the exit status and the last stderr lines.
const REPORT_WAIT_MS = 2_000;

/** Which step ended the process: `shutdown` + `exit` + closing stdin, SIGTERM or SIGKILL. */
export type ShutdownStep = "exit" | "sigterm" | "sigkill" | "already";

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
    private readonly tail: StderrTail,
    private readonly stderrEnded: Promise<void>,
    private readonly graceMs: number,
  ) {
    this.exited = new Promise<ExitInfo>((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
  }

  /** Spawns the sidecar; rejects with StartError when it cannot be run (ENOENT, EACCES). */
  static async spawn(options: SpawnOptions = {}): Promise<SidecarProcess> {
    const command = options.command ?? "promptd";
    const child = spawn(command, options.args ?? ["serve"], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once("spawn", () => resolve());
        child.once("error", reject);
      });
    } catch (error: unknown) {
      const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
      const why = code === "ENOENT" ? "no such file (or not on PATH)" : code === "EACCES" ? "permission denied (not executable?)" : String(error);
      throw new StartError(`could not run ${command}: ${why}`, { stderr: [] }, { cause: error, code });
    }
    const { stdin, stdout, stderr } = child;
    if (stdin === null || stdout === null || stderr === null) {
      throw new Error("the sidecar was spawned without pipes");
    }
    const tail = new StderrTail({ lines: options.stderrLines, bytes: options.stderrBytes, onLine: options.onStderr });
    const stderrEnded = tail.attach(stderr);
    // After a successful spawn, a late "error" (a failed kill) must not crash the host.
    child.on("error", () => undefined);
    return new SidecarProcess(child, new Connection(stdout, stdin, options.connection ?? {}), tail, stderrEnded, options.graceMs ?? DEFAULT_GRACE_MS);
  }

  /** The last lines of the sidecar's stderr, oldest first. */
  stderrTail(): string[] {
    return this.tail.lines();
  }

  /**
   * Its exit (waiting up to `waitMs` for it) and its last stderr lines (once stderr ended or the
   * wait passed): what an error message about it should say.
   */
  async report(waitMs: number = REPORT_WAIT_MS): Promise<SidecarReport> {
    const exit = this.exitInfo ?? (await within(this.exited, waitMs));
    if (exit !== undefined) {
      await within(this.stderrEnded, waitMs);
    }
    return { exit, stderr: this.tail.lines() };
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Set once the process has exited. */
  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  /**
   * Ends the sidecar in order, each step only if the one before did not, each given `graceMs`
   * (default 5000): the `shutdown` request (the server drains in-flight work), the `exit`
   * notification and closing its stdin; SIGTERM; SIGKILL. Calling it again returns the same outcome.
   */
  shutdown(options: ShutdownOptions = {}): Promise<ShutdownResult> {
    this.stopping ??= this.runShutdown(options);
    return this.stopping;
  }

  private async runShutdown(options: ShutdownOptions): Promise<ShutdownResult> {
    if (this.exitInfo !== undefined) {
      return { ...this.exitInfo, step: "already" };
    }
    const grace = options.graceMs ?? this.graceMs;
    const connection = this.connection;
    if (connection.state === "open") {
      try {
        await connection.sendRequest("shutdown", undefined, { timeoutMs: grace });
      } catch {
        // Refused, timed out or the pipe broke: `exit` is still worth a try, and the harsher
        // steps follow anyway.
      }
      await connection.sendNotification("exit").catch(() => undefined);
    }
    // Not awaited: a child that does not read its stdin could hold the end back forever.
    connection.end().catch(() => undefined);
    if (await this.exitsWithin(grace)) {
      return this.outcome("exit");
    }
    this.child.kill("SIGTERM");
    if (await this.exitsWithin(grace)) {
      return this.outcome("sigterm");
    }
    this.child.kill("SIGKILL");
    await this.exitsWithin(grace);
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

/** The promise's value, or undefined when it did not settle within `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
