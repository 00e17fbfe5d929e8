/**
 * The sidecar's stderr: always read (a full pipe would block the child), kept as a bounded tail
 * of its last lines for error messages, and handed line by line to an optional hook. Never copied
 * to the host's own stderr unless the hook does so.
 */

import { LineSplitter } from "./reader.js";

export interface StderrOptions {
  /** How many of the last lines to keep (default 50). */
  lines?: number | undefined;
  /** How many bytes those lines may take together (default 16 KiB); a longer line is cut. */
  bytes?: number | undefined;
  /** Each line as it arrives (for a logger); an exception it throws is ignored. */
  onLine?: ((line: string) => void) | undefined;
}

export const DEFAULT_STDERR_LINES = 50;
export const DEFAULT_STDERR_BYTES = 16 * 1024;
// A line over this is dropped by the splitter (and noted in the tail) instead of held whole.
const MAX_STDERR_LINE_BYTES = 1024 * 1024;

export class StderrTail {
  private readonly kept: string[] = [];
  private size = 0;
  private readonly maxLines: number;
  private readonly maxBytes: number;

  constructor(private readonly options: StderrOptions = {}) {
    this.maxLines = Math.max(1, options.lines ?? DEFAULT_STDERR_LINES);
    this.maxBytes = Math.max(64, options.bytes ?? DEFAULT_STDERR_BYTES);
  }

  /** Reads `stream` to its end; resolves when it ended (or failed). */
  attach(stream: NodeJS.ReadableStream): Promise<void> {
    const splitter = new LineSplitter(MAX_STDERR_LINE_BYTES);
    const emit = (pieces: ReturnType<LineSplitter["push"]>): void => {
      for (const piece of pieces) {
        this.add(piece.kind === "line" ? piece.text : `[a stderr line of ${piece.bytes} bytes was dropped]`);
      }
    };
    return new Promise<void>((resolve) => {
      stream.on("data", (chunk: Buffer) => emit(splitter.push(chunk)));
      stream.on("end", () => {
        emit(splitter.finish());
        resolve();
      });
      stream.on("close", () => resolve());
      stream.on("error", () => resolve());
    });
  }

  /** The last lines, oldest first. */
  lines(): string[] {
    return [...this.kept];
  }

  add(raw: string): void {
    const line = raw.length > this.maxBytes ? raw.slice(0, this.maxBytes) + "…" : raw;
    this.kept.push(line);
    this.size += Buffer.byteLength(line);
    while (this.kept.length > this.maxLines || (this.size > this.maxBytes && this.kept.length > 1)) {
      this.size -= Buffer.byteLength(this.kept.shift() ?? "");
    }
    const hook = this.options.onLine;
    if (hook !== undefined) {
      try {
        hook(raw);
      } catch {
        // A logger that throws must not stop the reading (the child would block on a full pipe).
      }
    }
  }
}
