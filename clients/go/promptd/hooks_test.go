package promptd

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// hookLog collects what the client-level hooks are told.
type hookLog struct {
	errs   chan error
	closes chan error
	exits  chan ExitInfo
}

func newHookLog() *hookLog {
	return &hookLog{errs: make(chan error, 16), closes: make(chan error, 4), exits: make(chan ExitInfo, 4)}
}

func (h *hookLog) options(opts Options) Options {
	opts.OnError = func(err error) { h.errs <- err }
	opts.OnClose = func(err error) { h.closes <- err }
	opts.OnExit = func(info ExitInfo) { h.exits <- info }
	return opts
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

func TestAPanicInProduceIsAnsweredAsAnErrorReportedAndTheHostKeepsRunning(t *testing.T) {
	hooks := newHookLog()
	var calls int
	client, srv := newFake(t, hooks.options(Options{Produce: func(_ context.Context, p ProduceParams) (ProduceResult, error) {
		calls++
		if p.Provider == "bad" {
			var m map[string]string
			m["x"] = "a nil map" // a host's bug
		}
		return ProduceResult{Text: Ptr("fine")}, nil
	}}))
	srv.send(`{"jsonrpc":"2.0","id":"promptd-1","method":"provider/produce","params":{"provider":"bad","session":null,"user_message":""}}`)
	assertSameJSON(t, replyJSON(srv.next()), `{"error":{"code":-32603,"message":"Internal error","data":{"kind":"internal"}}}`)
	var perr *PanicError
	if err := receive(t, hooks.errs, "OnError"); !errors.As(err, &perr) || perr.Method != ProduceMethod || len(perr.Stack) == 0 {
		t.Fatalf("OnError got %v", err)
	}
	srv.send(`{"jsonrpc":"2.0","id":"promptd-2","method":"provider/produce","params":{"provider":"good","session":null,"user_message":""}}`)
	assertSameJSON(t, replyJSON(srv.next()), `{"result":{"text":"fine"}}`)
	if client.conn.Err() != nil || calls != 2 {
		t.Fatalf("the connection: %v, produce calls: %d", client.conn.Err(), calls)
	}
}

func TestAPanicInOnEventIsReportedAndLaterEventsStillArrive(t *testing.T) {
	hooks := newHookLog()
	got := make(chan EventName, 4)
	_, srv := newFake(t, hooks.options(Options{OnEvent: func(e Event) {
		if e.Method == "event/first" {
			panic("boom")
		}
		got <- e.Method
	}}))
	srv.send(`{"jsonrpc":"2.0","method":"event/first","params":{}}`)
	srv.send(`{"jsonrpc":"2.0","method":"event/second","params":{}}`)
	if m := receive(t, got, "second event"); m != "event/second" {
		t.Fatalf("got %s", m)
	}
	var perr *PanicError
	if err := receive(t, hooks.errs, "OnError"); !errors.As(err, &perr) || perr.Value != "boom" {
		t.Fatalf("OnError got %v", err)
	}
}

func TestAHostProviderThatPanicsIsSkippedByTheRealServer(t *testing.T) {
	hooks := newHookLog()
	client := startWithHostProviders(t, hooks.options(Options{Produce: func(context.Context, ProduceParams) (ProduceResult, error) {
		panic("the host's bug")
	}}))
	registerHost(t, client, "host.buggy", 5000)
	res, err := client.ReminderAssemble(testContext(t), ReminderAssembleParams{Session: "s1", UserMessage: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Skipped, func(s SkipReport) bool { return s.Provider == "host.buggy" }) {
		t.Fatalf("skipped: %+v", res.Skipped)
	}
	var perr *PanicError
	if err := receive(t, hooks.errs, "OnError"); !errors.As(err, &perr) {
		t.Fatalf("OnError got %v", err)
	}
}

func TestCloseAndExitHooksSayHowTheSessionEnded(t *testing.T) {
	t.Run("closed by the client", func(t *testing.T) {
		hooks := newHookLog()
		client := startSidecar(t, hooks.options(Options{}))
		pid := client.PID()
		if err := client.Close(testContext(t)); err != nil {
			t.Fatal(err)
		}
		if err := receive(t, hooks.closes, "OnClose"); !errors.Is(err, ErrClosed) {
			t.Fatalf("OnClose got %v", err)
		}
		info := receive(t, hooks.exits, "OnExit")
		if info.PID != pid || info.Stage != StageExit || info.State == nil || info.State.ExitCode() != 0 || info.Err != nil {
			t.Fatalf("OnExit got %+v", info)
		}
	})
	t.Run("the process died", func(t *testing.T) {
		hooks := newHookLog()
		client := startSidecar(t, hooks.options(Options{}))
		if err := syscall.Kill(client.PID(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := receive(t, hooks.closes, "OnClose"); !errors.Is(err, ErrClosed) {
			t.Fatalf("OnClose got %v", err)
		}
		info := receive(t, hooks.exits, "OnExit")
		if info.Stage != StageNone || info.State == nil || !strings.Contains(info.State.String(), "killed") {
			t.Fatalf("OnExit got %+v", info)
		}
	})
	t.Run("each once", func(t *testing.T) {
		hooks := newHookLog()
		client := startSidecar(t, hooks.options(Options{}))
		_ = client.Close(testContext(t))
		_ = client.Close(testContext(t))
		receive(t, hooks.closes, "OnClose")
		receive(t, hooks.exits, "OnExit")
		time.Sleep(100 * time.Millisecond)
		if len(hooks.closes)+len(hooks.exits) != 0 {
			t.Fatal("a hook was called twice")
		}
	})
}

func TestCallsRacingCloseOrAfterItFailOnlyWithErrClosed(t *testing.T) {
	client := startSidecar(t, Options{})
	ctx := testContext(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if _, err := client.ReminderKeys(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	time.Sleep(50 * time.Millisecond) // calls in flight when Close starts
	if err := client.Close(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var rpcErr *Error
		if !errors.Is(err, ErrClosed) || errors.As(err, &rpcErr) {
			t.Errorf("a call racing Close got %#v", err)
		}
	}
	if err := client.Notify(ctx, "$/anything", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("a notification after Close got %v", err)
	}
}
