/**
 * The read side: bytes in, lines out. `LineSplitter` is pure (no streams) so it is tested with
 * plain buffers; `LineReader` binds one to a Readable. Neither knows JSON-RPC.
 */

import type { Readable } from "node:stream";

/**
 * Upper bound for one incoming line. The server refuses requests over 16 MiB by default, but a
 * reply can be larger than its request (escaping turns every `&` into `&amp;`, five times the
 * size), so 128 MiB leaves room for that while still bounding what a runaway peer can make us hold.
 */
export const DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024;

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export type Piece = { kind: "line"; text: string } | { kind: "oversize"; bytes: number };

/** Splits a byte stream at `\n` (a trailing `\r` is dropped), holding at most `maxLineBytes`. */
export class LineSplitter {
  private chunks: Buffer[] = [];
  private size = 0;
  // While set, bytes are counted and dropped until the next newline: an over-long line never
  // sits in memory whole.
  private discarding = false;
  private discarded = 0;

  constructor(readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES) {}

  push(chunk: Buffer): Piece[] {
    const out: Piece[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const index = chunk.indexOf(NEWLINE, start);
      const end = index === -1 ? chunk.length : index;
      this.take(chunk.subarray(start, end));
      if (index === -1) {
        break;
      }
      out.push(this.cut());
      start = index + 1;
    }
    return out;
  }

  /** The stream ended: an unterminated last line still counts as a line. */
  finish(): Piece[] {
    if (this.discarding || this.size > 0) {
      return [this.cut()];
    }
    return [];
  }

  private take(bytes: Buffer): void {
    if (bytes.length === 0) {
      return;
    }
    if (this.discarding) {
      this.discarded += bytes.length;
      return;
    }
    if (this.size + bytes.length > this.maxLineBytes) {
      this.discarding = true;
      this.discarded = this.size + bytes.length;
      this.chunks = [];
      this.size = 0;
      return;
    }
    this.chunks.push(bytes);
    this.size += bytes.length;
  }

  private cut(): Piece {
    if (this.discarding) {
      const bytes = this.discarded;
      this.discarding = false;
      this.discarded = 0;
      return { kind: "oversize", bytes };
    }
    let line = this.chunks.length === 1 && this.chunks[0] !== undefined ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    this.chunks = [];
    this.size = 0;
    if (line.length > 0 && line[line.length - 1] === CARRIAGE_RETURN) {
      line = line.subarray(0, line.length - 1);
    }
    return { kind: "line", text: line.toString("utf8") };
  }
}

function ignore(): void {}

export interface LineReaderHandlers {
  line(text: string): void;
  oversize(bytes: number): void;
  /** The stream ended (no error) or failed; called once. */
  end(error: Error | undefined): void;
}

/** Feeds a Readable through a LineSplitter and reports lines, oversize lines and the end. */
export class LineReader {
  private readonly splitter: LineSplitter;
  private ended = false;
  private readonly onData = (chunk: Buffer | string): void => {
    this.deliver(this.splitter.push(typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk));
  };
  private readonly onEnd = (): void => this.finish(undefined);
  private readonly onError = (error: Error): void => this.finish(error);

  constructor(
    private readonly stream: Readable,
    private readonly handlers: LineReaderHandlers,
    maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
  ) {
    this.splitter = new LineSplitter(maxLineBytes);
    stream.on("data", this.onData);
    stream.on("end", this.onEnd);
    // "close" without "end" happens when the stream is destroyed; both mean no more lines.
    stream.on("close", this.onEnd);
    stream.on("error", this.onError);
  }

  dispose(): void {
    this.stream.off("data", this.onData);
    this.stream.off("end", this.onEnd);
    this.stream.off("close", this.onEnd);
    this.stream.off("error", this.onError);
    // An "error" with no listener would crash the host process; after dispose nobody cares.
    this.stream.on("error", ignore);
  }

  private finish(error: Error | undefined): void {
    if (this.ended) {
      return;
    }
    this.ended = true;
    if (error === undefined) {
      this.deliver(this.splitter.finish());
    }
    this.dispose();
    this.handlers.end(error);
  }

  private deliver(pieces: Piece[]): void {
    for (const piece of pieces) {
      if (piece.kind === "line") {
        this.handlers.line(piece.text);
      } else {
        this.handlers.oversize(piece.bytes);
      }
    }
  }
}
