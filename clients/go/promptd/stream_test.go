package promptd

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

func TestLinesAreFramedAsThePromptdWireSays(t *testing.T) {
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"one frame", "{\"a\":1}\n", []string{`{"a":1}`}},
		{"a trailing carriage return is tolerated", "{}\r\n[]\r\n", []string{`{}`, `[]`}},
		{"blank lines are skipped", "\n\n{}\n  \n\r\n{}\n", []string{`{}`, `{}`}},
		{"a last line without its newline is a frame", "{}\n{\"last\":true}", []string{`{}`, `{"last":true}`}},
		{"a line longer than the read buffer", strings.Repeat("x", 3*readBuffer) + "\n", []string{strings.Repeat("x", 3*readBuffer)}},
		{"nothing", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewLineStream(strings.NewReader(tc.input), io.Discard, 0)
			var got []string
			for {
				frame, err := s.ReadObject()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(frame))
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestALineOverTheLimitEndsTheStreamWithMessageTooLarge(t *testing.T) {
	s := NewLineStream(strings.NewReader("{}\n"+strings.Repeat("x", 200)+"\n{}\n"), io.Discard, 100)
	if frame, err := s.ReadObject(); err != nil || string(frame) != "{}" {
		t.Fatalf("first frame: %q %v", frame, err)
	}
	if _, err := s.ReadObject(); !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("got %v", err)
	}
}

func TestAFrameWithANewlineIsNeverWritten(t *testing.T) {
	var out bytes.Buffer
	s := NewLineStream(strings.NewReader(""), &out, 0)
	if err := s.WriteObject([]byte("{\n}")); err == nil || out.Len() != 0 {
		t.Fatalf("err %v, wrote %q", err, out.String())
	}
}

func TestConcurrentWritersNeverInterleaveFrames(t *testing.T) {
	var out lockedBuffer
	s := NewLineStream(strings.NewReader(""), &out, 0)
	var wg sync.WaitGroup
	const writers, each = 8, 200
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frame := []byte(`"` + strings.Repeat(string(rune('a'+w)), 1000) + `"`)
			for range each {
				if err := s.WriteObject(frame); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("%d lines, want %d", len(lines), writers*each)
	}
	for _, line := range lines {
		if len(line) != 1002 || strings.Count(line, line[1:2]) != 1000 {
			t.Fatalf("a mixed line: %.40q...", line)
		}
	}
}

// lockedBuffer is a bytes.Buffer whose individual writes are atomic, like a pipe's writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
