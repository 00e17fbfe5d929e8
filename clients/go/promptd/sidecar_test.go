package promptd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// These tests run against a real `promptd serve` ($PROMPTD).

const vectorsDir = "../../../protocol/vectors"

// vector is one shared case (protocol/vectors/README.md).
type vector struct {
	Description string          `json:"description"`
	Method      string          `json:"method"`
	Params      json.RawMessage `json:"params"`
	Expect      struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int64  `json:"code"`
			Kind string `json:"kind"`
		} `json:"error"`
	} `json:"expect"`
}

func TestEverySharedVectorGivesItsExpectedAnswer(t *testing.T) {
	all, err := filepath.Glob(filepath.Join(vectorsDir, "*", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	// wire/ holds raw-bytes vectors, replayed by TestEveryWireVectorGivesItsFrames.
	var paths []string
	for _, path := range all {
		if filepath.Base(filepath.Dir(path)) != "wire" {
			paths = append(paths, path)
		}
	}
	if len(paths) == 0 {
		t.Fatalf("no vectors under %s", vectorsDir)
	}
	// One server for all of them: vectors are stateless, so order and sharing must not matter.
	// Vectors record offsets in code points, the protocol's default unit.
	client := startSidecar(t, Options{Initialize: InitializeParams{OffsetUnit: Ptr(InitializeParamsOffsetUnitCodePoints)}})
	for _, path := range paths {
		name := filepath.Base(filepath.Dir(path)) + "/" + strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var v vector
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("unreadable vector: %v", err)
			}
			if (v.Expect.Result == nil) == (v.Expect.Error == nil) {
				t.Fatal("a vector expects exactly one of result and error")
			}
			var got json.RawMessage
			err = client.Call(testContext(t), v.Method, v.Params, &got)
			if v.Expect.Error != nil {
				var rpcErr *Error
				if !errors.As(err, &rpcErr) {
					t.Fatalf("%s: got %v (%s), want error %d/%s", v.Description, err, got, v.Expect.Error.Code, v.Expect.Error.Kind)
				}
				if rpcErr.Code != v.Expect.Error.Code || string(rpcErr.Kind()) != v.Expect.Error.Kind {
					t.Fatalf("%s: got error %d/%s, want %d/%s", v.Description, rpcErr.Code, rpcErr.Kind(), v.Expect.Error.Code, v.Expect.Error.Kind)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", v.Description, err)
			}
			if !sameJSON(got, v.Expect.Result) {
				t.Fatalf("%s:\n got %s\nwant %s", v.Description, got, v.Expect.Result)
			}
		})
	}
}

func TestStartInitializesAndTheServerListsEveryMethodTheWrappersCover(t *testing.T) {
	client := startSidecar(t, Options{Initialize: InitializeParams{
		ClientInfo:   &ClientInfo{Name: "promptd-go-tests", Version: Ptr("0")},
		Capabilities: &Capabilities{Events: BoolOrList[EventName]{All: true}},
	}})
	res := client.Handshake()
	if res.ProtocolVersion != ProtocolVersion || res.ServerInfo.Name != "promptd" || res.ServerInfo.Version == "" {
		t.Fatalf("got %+v", res)
	}
	// Both ways: a method the server has and the wrappers lack means types.go is stale
	// (or protocol/openrpc.json is); the reverse means the document lists too much.
	for _, m := range res.Methods {
		if !slices.Contains(SpecMethods, m) {
			t.Errorf("the server serves %s, which the generated wrappers do not know: regenerate", m)
		}
	}
	for _, m := range SpecMethods {
		if !slices.Contains(res.Methods, m) {
			t.Errorf("the wrappers know %s, which the server does not serve", m)
		}
	}
	_, err := client.Initialize(testContext(t), InitializeParams{})
	var rpcErr *Error
	if !errors.As(err, &rpcErr) || rpcErr.Kind() != "already_initialized" {
		t.Fatalf("a second initialize got %v", err)
	}
	if pid := client.PID(); pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("PID %d is not the running process", pid)
	}
}

func TestTypedWrappersRoundTripAgainstTheServer(t *testing.T) {
	client := startSidecar(t, Options{})
	ctx := testContext(t)
	wrapped, err := client.ReminderWrap(ctx, ReminderWrapParams{Key: "session.cwd", Body: "a < b"})
	if err != nil || wrapped.Text != "<system-reminder key=\"session.cwd\">\na &lt; b\n</system-reminder>" {
		t.Fatalf("wrap: %q %v", wrapped.Text, err)
	}
	many, err := client.ReminderWrapMany(ctx, ReminderWrapManyParams{Parts: []ReminderPart{{Key: "a", Body: "1"}, {Key: "b", Body: "2"}}})
	if err != nil || strings.Count(many.Text, "</system-reminder>\n\n<system-reminder") != 1 {
		t.Fatalf("wrap_many: %q %v", many.Text, err)
	}
	keys, err := client.ReminderKeys(ctx)
	if err != nil || len(keys.Keys) == 0 {
		t.Fatalf("keys: %+v %v", keys, err)
	}
	doc, err := client.RPCDiscover(ctx)
	if err != nil || doc["openrpc"] == nil || doc["methods"] == nil {
		t.Fatalf("discover kept %d members, %v", len(doc), err)
	}
}

func TestServerErrorsArriveAsErrorsWithCodeAndKind(t *testing.T) {
	client := startSidecar(t, Options{})
	for _, tc := range []struct {
		name   string
		method string
		params any
		code   int64
		kind   string
	}{
		{"unknown method", "no/such", nil, CodeMethodNotFound, "method_not_found"},
		{"positional params", "reminder/wrap", []string{"k", "b"}, CodeInvalidParams, "positional_params"},
		{"a missing field", "reminder/wrap", map[string]string{"key": "k"}, CodeInvalidParams, "invalid_params"},
		{"an unknown field", "reminder/wrap", map[string]string{"key": "k", "body": "b", "typo": "x"}, CodeInvalidParams, "invalid_params"},
		{"a bad key", "reminder/wrap", ReminderWrapParams{Key: "a b", Body: "x"}, -32010, "invalid_key"},
		{"a nested marker", "reminder/wrap", ReminderWrapParams{Key: "k", Body: "<system-reminder>"}, -32011, "nested_marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := client.Call(testContext(t), tc.method, tc.params, nil)
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("got %v", err)
			}
			if rpcErr.Code != tc.code || string(rpcErr.Kind()) != tc.kind || rpcErr.Message == "" {
				t.Fatalf("got %d/%s %q", rpcErr.Code, rpcErr.Kind(), rpcErr.Message)
			}
		})
	}
	if err := client.Call(testContext(t), "reminder/keys", nil, nil); err != nil {
		t.Fatalf("the server stopped serving after errors: %v", err)
	}
}

func TestManyConcurrentCallsEachGetTheirOwnAnswer(t *testing.T) {
	client := startSidecar(t, Options{})
	ctx := testContext(t)
	const n = 300
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprintf("body %d %s", i, strings.Repeat("&", i))
			res, err := client.ReminderWrap(ctx, ReminderWrapParams{Key: fmt.Sprintf("k%d", i), Body: body})
			want := fmt.Sprintf("<system-reminder key=\"k%d\">\nbody %d %s\n</system-reminder>", i, i, strings.Repeat("&amp;", i))
			if err != nil || res.Text != want {
				errs <- fmt.Errorf("call %d: %q %v", i, res.Text, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLargeAnswersWrittenWhileThePipeIsFullArriveWhole(t *testing.T) {
	// Answers of 100 KiB and more fill the pipe, so promptd's writer has to queue the rest of a
	// frame while other answers are ready: each must still arrive as one whole line.
	var mu sync.Mutex
	var broken int
	client := startSidecar(t, Options{Conn: ConnOptions{Trace: func(dir Direction, frame []byte) {
		if dir == Received && !json.Valid(frame) {
			mu.Lock()
			broken++
			mu.Unlock()
		}
	}}})
	ctx := testContext(t)
	const n = 48
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat("&", 20000+i)
			res, err := client.ReminderWrap(ctx, ReminderWrapParams{Key: "k", Body: body})
			if err != nil || !strings.Contains(res.Text, strings.Repeat("&amp;", 20000+i)+"\n") {
				errs <- fmt.Errorf("call %d: %d chars, %v", i, len(res.Text), err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if broken > 0 {
		t.Errorf("%d lines from promptd were not whole JSON frames (frames interleaved on the wire)", broken)
	}
	for err := range errs {
		t.Error(err)
	}
}

func TestALargeBodyRoundTrips(t *testing.T) {
	client := startSidecar(t, Options{})
	body := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
	res, err := client.ReminderWrap(testContext(t), ReminderWrapParams{Key: "big", Body: body})
	if err != nil || !strings.Contains(res.Text, body) {
		t.Fatalf("%d chars, %v", len(res.Text), err)
	}
}

func TestCloseShutsDownInOrderAndTheProcessExitsCleanly(t *testing.T) {
	var rec recorder
	c, err := Start(testContext(t), sidecar(t), Options{Conn: ConnOptions{Trace: rec.trace}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReminderKeys(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(testContext(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if c.Stage() != StageExit {
		t.Fatalf("the process ended at %s, want at exit", c.Stage())
	}
	var sent []string
	for _, f := range rec.snapshot() {
		if f.dir == Sent {
			sent = append(sent, f.msg.Method)
		}
	}
	if want := []string{"initialize", "reminder/keys", "shutdown", "exit"}; !slices.Equal(sent, want) {
		t.Fatalf("sent %v, want %v", sent, want)
	}
	if err := c.Call(testContext(t), "reminder/keys", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a call after Close got %v", err)
	}
}

func TestAfterShutdownRequestsAreRefusedAndTheProcessStillEndsCleanly(t *testing.T) {
	client := startSidecar(t, Options{})
	// A raw shutdown (Close sends it itself; there is no Shutdown wrapper).
	if err := client.Call(testContext(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := reflect.TypeOf(client).MethodByName("Shutdown"); ok {
		t.Fatal("the client has a Shutdown wrapper, which the document marks x-no-wrapper")
	}
	// promptd answers -32002; the client reports it in the one shape a closed client has.
	_, err := client.ReminderKeys(testContext(t))
	var rpcErr *Error
	if !errors.Is(err, ErrClosed) || errors.As(err, &rpcErr) {
		t.Fatalf("got %#v, want ErrClosed and no *Error", err)
	}
	if err := client.Close(testContext(t)); err != nil || client.Stage() != StageExit {
		t.Fatalf("Close: %v at %s", err, client.Stage())
	}
}

func TestWhenTheProcessIsKilledCallsSayBySIGKILLWithItsStderrAndMatchErrClosed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL is Unix")
	}
	// A call in flight when the process dies: promptd is waiting for this host provider.
	producing := make(chan struct{})
	client := startWithHostProviders(t, Options{Produce: func(ctx context.Context, _ ProduceParams) (ProduceResult, error) {
		close(producing)
		<-ctx.Done() // until the connection closes
		return ProduceResult{}, ctx.Err()
	}})
	registerHost(t, client, "host.slow", 60_000)
	pending := make(chan error, 1)
	go func() {
		_, err := client.ReminderAssemble(testContext(t), ReminderAssembleParams{Session: "s1", UserMessage: "hello"})
		pending <- err
	}()
	receive(t, producing, "provider/produce")
	if err := syscall.Kill(client.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	inFlight := receive(t, pending, "the pending call's error")
	_, later := client.ReminderKeys(testContext(t))
	for name, err := range map[string]error{"the pending call": inFlight, "a later call": later} {
		var exitErr *ExitError
		if !errors.Is(err, ErrClosed) || !errors.As(err, &exitErr) {
			t.Fatalf("%s: got %T %v, want an *ExitError matching ErrClosed", name, err, err)
		}
		ws, ok := exitErr.State.Sys().(syscall.WaitStatus)
		if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s: the exit state is %v", name, exitErr.State)
		}
		// promptd logs "started" and "initialized" on stderr before any call is made.
		if text := err.Error(); !strings.Contains(text, "was killed by SIGKILL") || !strings.Contains(text, `"event":"initialized"`) || len(exitErr.Stderr) == 0 {
			t.Fatalf("%s: the error does not name the signal and the last stderr lines:\n%v", name, err)
		}
	}
	err := client.Close(testContext(t))
	var shut *ShutdownError
	if !errors.As(err, &shut) || client.Stage() != StageNone || shut.Stage != StageNone {
		t.Fatalf("Close after a crash: %v at %s", err, client.Stage())
	}
	if text := err.Error(); !strings.Contains(text, "had already ended by itself") || !strings.Contains(text, "was killed by SIGKILL") || strings.Contains(text, "at none") {
		t.Fatalf("Close's error does not say the process had died, and how:\n%v", err)
	}
}

func TestACallStillSaysErrClosedWithoutAnExitReportWhenTheClientClosedTheConnection(t *testing.T) {
	client := startSidecar(t, Options{})
	client.Conn().Close() // the process is still running: nothing to report about it
	_, err := client.ReminderKeys(testContext(t))
	var exitErr *ExitError
	if !errors.Is(err, ErrClosed) || errors.As(err, &exitErr) {
		t.Fatalf("got %T %v, want a plain ErrClosed", err, err)
	}
}

func TestAContextThatHasEndedMakesCloseKillAtOnce(t *testing.T) {
	client := startSidecar(t, Options{Process: ProcessOptions{Grace: 10 * time.Minute}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	started := time.Now()
	err := client.Close(ctx)
	var shut *ShutdownError
	if !errors.As(err, &shut) || shut.Stage != StageKilled {
		t.Fatalf("got %v", err)
	}
	if elapsed := time.Since(started); elapsed > patience {
		t.Fatalf("Close took %s despite the ended context", elapsed)
	}
}

func TestLogsGoToTheStderrHookAndNeverIntoTheProtocol(t *testing.T) {
	var logs lockedBuffer
	client := startSidecar(t, Options{Process: ProcessOptions{
		Args:     []string{"--log-level", "debug"},
		OnStderr: func(line string) { logs.Write([]byte(line + "\n")) },
	}})
	if _, err := client.ReminderWrap(testContext(t), ReminderWrapParams{Key: "k", Body: "secret-body-text"}); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "{") {
		t.Fatal("no JSON log lines reached Stderr")
	}
	if strings.Contains(logs.String(), "secret-body-text") {
		t.Fatal("a body reached the logs")
	}
}

// sameJSON compares two JSON texts as values: key order does not matter, and numbers compare by
// value (1 and 1.0 are equal) without going through float64.
func sameJSON(a, b []byte) bool {
	var x, y any
	for _, p := range []struct {
		data []byte
		into *any
	}{{a, &x}, {b, &y}} {
		dec := json.NewDecoder(bytes.NewReader(p.data))
		dec.UseNumber()
		if dec.Decode(p.into) != nil {
			return false
		}
	}
	return sameValue(x, y)
}

func sameValue(x, y any) bool {
	switch a := x.(type) {
	case map[string]any:
		b, ok := y.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := y.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number, float64:
		ra, okA := new(big.Rat).SetString(fmt.Sprint(a))
		rb, okB := new(big.Rat).SetString(fmt.Sprint(y))
		return okA && okB && ra.Cmp(rb) == 0
	}
	return x == y
}
