package promptd

import (
	"bytes"
	"sync"
)

// DefaultStderrLines is how many of promptd's last stderr lines a client keeps (for Start's
// errors, ExitInfo and Client.StderrTail) when ProcessOptions.StderrLines is 0.
const DefaultStderrLines = 50

// maxStderrLine bounds one kept line; the rest of a longer line is dropped (marked with "…").
const maxStderrLine = 4096

// stderrTail receives the process's stderr: it keeps the last lines in a bounded ring and hands
// each line to the optional hook. It is the process's stderr writer, so exec's copying goroutine
// is its only writer.
type stderrTail struct {
	max    int
	onLine func(string)

	mu      sync.Mutex
	lines   []string // the last lines, oldest first, at most max
	partial []byte   // the unfinished line
	cut     bool     // the unfinished line was over maxStderrLine
}

func newStderrTail(max int, onLine func(string)) *stderrTail {
	return &stderrTail{max: max, onLine: onLine}
}

func (t *stderrTail) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		t.mu.Lock()
		if room := maxStderrLine - len(t.partial); len(chunk) > room {
			chunk, t.cut = chunk[:max(room, 0)], true
		}
		t.partial = append(t.partial, chunk...)
		t.mu.Unlock()
		if i < 0 {
			break
		}
		t.endLine()
		p = p[i+1:]
	}
	return n, nil
}

// flush ends an unfinished last line (the process has gone; no newline is coming).
func (t *stderrTail) flush() {
	t.mu.Lock()
	pending := len(t.partial) > 0 || t.cut
	t.mu.Unlock()
	if pending {
		t.endLine()
	}
}

func (t *stderrTail) endLine() {
	t.mu.Lock()
	line := string(bytes.TrimSuffix(t.partial, []byte("\r")))
	if t.cut {
		line += "…"
	}
	t.partial, t.cut = t.partial[:0], false
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = append(t.lines[:0], t.lines[len(t.lines)-t.max:]...)
	}
	t.mu.Unlock()
	if t.onLine != nil {
		t.onLine(line)
	}
}

// tail returns a copy of the kept lines, oldest first.
func (t *stderrTail) tail() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...)
}
