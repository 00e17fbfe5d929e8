package promptd

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// patience bounds every wait in the tests: long enough for a loaded CI machine (a minute: the
// sidecar is a Python process, started many times over on shared cores), short enough that a
// hang fails instead of stalling the suite. Waits that pass end at once; only a hang waits it out.
const patience = 60 * time.Second

// sidecar is the promptd executable: $PROMPTD, or promptd on PATH (the top-level Makefile passes
// the project's own). The suite is about the real sidecar, so a missing one fails, loudly.
func sidecar(t testing.TB) string {
	t.Helper()
	path := os.Getenv("PROMPTD")
	if path == "" {
		path = "promptd"
	}
	found, err := exec.LookPath(path)
	if err != nil {
		t.Fatalf("the promptd sidecar was not found (%v): set PROMPTD=/path/to/promptd or run `make test` from the repository root", err)
	}
	return found
}

// startSidecar spawns a real `promptd serve`, closed when the test ends.
func startSidecar(t *testing.T, opts Options) *Client {
	t.Helper()
	c, err := Start(testContext(t), sidecar(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		_ = c.Close(ctx)
	})
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	t.Cleanup(cancel)
	return ctx
}

// fakeServer is the other end of an in-memory connection: the test reads what the client sends
// and writes whatever the script needs, in any order.
type fakeServer struct {
	t      *testing.T
	stream *LineStream
	frames chan message
}

// newFake joins a client and a fake server with two in-memory pipes.
func newFake(t *testing.T, opts Options) (*Client, *fakeServer) {
	t.Helper()
	stream, srv := newFakePeer(t)
	client := NewClient(stream, opts)
	t.Cleanup(func() { client.Close(context.Background()) })
	return client, srv
}

// newFakePeer returns the client's end of an in-memory connection and the fake server at the
// other end.
func newFakePeer(t *testing.T) (*LineStream, *fakeServer) {
	t.Helper()
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	srv := &fakeServer{t: t, stream: NewLineStream(toServerR, toClientW, 0), frames: make(chan message, 64)}
	go func() {
		defer close(srv.frames)
		for {
			data, err := srv.stream.ReadObject()
			if err != nil {
				return
			}
			var msg message
			if err := json.Unmarshal(data, &msg); err != nil {
				t.Errorf("the client sent something that is not JSON-RPC: %q", data)
				return
			}
			srv.frames <- msg
		}
	}()
	t.Cleanup(func() { srv.stream.Close() })
	return NewLineStream(toClientR, toServerW, 0), srv
}

// next is the next frame the client sent.
func (s *fakeServer) next() message {
	s.t.Helper()
	select {
	case msg, ok := <-s.frames:
		if !ok {
			s.t.Fatal("the client closed the connection")
		}
		return msg
	case <-time.After(patience):
		s.t.Fatal("the client sent nothing")
	}
	return message{}
}

// send writes a raw frame to the client.
func (s *fakeServer) send(frame string) {
	s.t.Helper()
	if err := s.stream.WriteObject([]byte(frame)); err != nil {
		s.t.Fatal(err)
	}
}

// answer replies to a request with a result.
func (s *fakeServer) answer(req message, result string) {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + result + `}`)
}

// callAsync runs a call on its own goroutine; the channel yields its error.
func callAsync(ctx context.Context, c *Client, method string, params, result any) <-chan error {
	done := make(chan error, 1)
	go func() { done <- c.Call(ctx, method, params, result) }()
	return done
}

func waitErr(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(patience):
		t.Fatal("the call did not return")
	}
	return nil
}

// recorder keeps traced frames for tests that check what went over the wire.
type recorder struct {
	mu     sync.Mutex
	frames []tracedFrame
}

type tracedFrame struct {
	dir Direction
	msg message
}

func (r *recorder) trace(dir Direction, frame []byte) {
	var msg message
	if json.Unmarshal(frame, &msg) != nil {
		return
	}
	r.mu.Lock()
	r.frames = append(r.frames, tracedFrame{dir, msg})
	r.mu.Unlock()
}

func (r *recorder) snapshot() []tracedFrame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]tracedFrame(nil), r.frames...)
}

// waitFor polls cond until it holds or patience runs out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
