package promptd

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// wireVector is one raw-bytes case (protocol/vectors/README.md, "Wire vectors"): bytes in, the
// frames out in any order, and the exit status once the input has ended.
type wireVector struct {
	Description     string            `json:"description"`
	In              []json.RawMessage `json:"in"`
	Out             []any             `json:"out"`
	ExitCode        *int              `json:"exit_code"`
	MaxMessageBytes *int              `json:"max_message_bytes"`
}

// wireInput is one item of `in`: a line (a JSON string, written with "\n"), or raw text, hex
// bytes, a fill, or an await (wait for that many frames before writing on).
type wireInput struct {
	Raw   *string `json:"raw"`
	Hex   *string `json:"hex"`
	Fill  *string `json:"fill"`
	Times int     `json:"times"`
	Await *int    `json:"await"`
}

func TestEveryWireVectorGivesItsFrames(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(vectorsDir, "wire", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no wire vectors under %s", vectorsDir)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			t.Parallel() // one server per vector: each one ends its server
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var v wireVector
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("unreadable vector: %v", err)
			}
			frames, code := replayWire(t, v)
			if !sameFrames(v.Out, frames) {
				t.Fatalf("%s:\n got %v\nwant %v", v.Description, frames, v.Out)
			}
			want := 0
			if v.ExitCode != nil {
				want = *v.ExitCode
			}
			if code != want {
				t.Fatalf("%s: exit status %d, want %d", v.Description, code, want)
			}
		})
	}
}

// replayWire runs one vector against a spawned `promptd serve`: its frames and exit status.
func replayWire(t *testing.T, v wireVector) ([]any, int) {
	t.Helper()
	cmd := exec.Command(sidecar(t), "serve")
	cmd.Env = append(os.Environ(), "PROMPTD_LOG_LEVEL=warning")
	if v.MaxMessageBytes != nil {
		cmd.Env = append(cmd.Env, "PROMPTD_MAX_MESSAGE_BYTES="+strconv.Itoa(*v.MaxMessageBytes))
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var frames []any
	arrived := make(chan struct{}, 1)
	readDone := make(chan error, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		scanner.Buffer(make([]byte, 1<<20), 1<<26)
		for scanner.Scan() {
			var frame any
			if err := json.Unmarshal(scanner.Bytes(), &frame); err != nil {
				readDone <- fmt.Errorf("not a JSON frame: %q", scanner.Text())
				return
			}
			mu.Lock()
			frames = append(frames, frame)
			mu.Unlock()
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
		readDone <- scanner.Err()
	}()
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(frames)
	}
	deadline := time.After(patience)
	for _, raw := range v.In {
		var line string
		var chunk []byte
		if json.Unmarshal(raw, &line) == nil {
			chunk = []byte(line + "\n")
		} else {
			var in wireInput
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatalf("unreadable input item %s", raw)
			}
			switch {
			case in.Raw != nil:
				chunk = []byte(*in.Raw)
			case in.Hex != nil:
				if chunk, err = hex.DecodeString(*in.Hex); err != nil {
					t.Fatal(err)
				}
			case in.Fill != nil:
				chunk = bytes.Repeat([]byte(*in.Fill), in.Times)
			case in.Await != nil:
				for count() < *in.Await {
					select {
					case <-arrived:
					case <-deadline:
						t.Fatalf("%s: %d frames, awaiting %d", v.Description, count(), *in.Await)
					}
				}
			}
		}
		if _, err := stdin.Write(chunk); err != nil {
			break // the server is gone: an exit in the input
		}
	}
	_ = stdin.Close()
	select {
	case err := <-readDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-deadline:
		_ = cmd.Process.Kill()
		t.Fatalf("%s: the output did not end", v.Description)
	}
	code := 0
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatal(err)
		}
		code = exit.ExitCode()
	}
	return frames, code
}

// sameFrames: the same number of frames, each expected one matched by a different actual one, in
// any order (a batch answer's members too).
func sameFrames(want, got []any) bool {
	return unorderedMatch(want, got, frameMatches)
}

func frameMatches(want, got any) bool {
	if w, ok := want.([]any); ok {
		g, ok := got.([]any)
		return ok && unorderedMatch(w, g, wireMatches)
	}
	return wireMatches(want, got)
}

func unorderedMatch(want, got []any, match func(any, any) bool) bool {
	if len(want) != len(got) {
		return false
	}
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, g := range got {
			if !used[i] && match(w, g) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// wireMatches: an expected object matches when each of its members matches (the actual one may
// have more); arrays element by element; anything else by equality.
func wireMatches(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			gv, present := g[k]
			if !present || !wireMatches(wv, gv) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !wireMatches(w[i], g[i]) {
				return false
			}
		}
		return true
	default:
		return want == got
	}
}
