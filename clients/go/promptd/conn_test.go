package promptd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests script the server by hand (fakeServer), for the orders and failures a real server
// cannot be made to produce on demand.

func TestAnswersThatArriveOutOfOrderReachTheirOwnCalls(t *testing.T) {
	client, srv := newFake(t, Options{})
	ctx := testContext(t)
	const n = 200
	results := make([]string, n)
	dones := make([]<-chan error, n)
	for i := range n {
		dones[i] = callAsync(ctx, client, "echo", map[string]int{"i": i}, &results[i])
	}
	requests := make([]message, n)
	for i := range n {
		requests[i] = srv.next()
	}
	rand.New(rand.NewSource(1)).Shuffle(n, func(i, j int) { requests[i], requests[j] = requests[j], requests[i] })
	for _, req := range requests {
		answer, _ := json.Marshal("answer to " + string(req.Params))
		srv.answer(req, string(answer))
	}
	for i := range n {
		if err := waitErr(t, dones[i]); err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`answer to {"i":%d}`, i); results[i] != want {
			t.Fatalf("call %d got %q, want %q", i, results[i], want)
		}
	}
}

func TestACallWhoseContextEndsIsForgottenAndTheServerIsToldWhichRequest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		timeout time.Duration // 0: cancelled by hand once the request is out
		want    error
	}{
		{"cancelled", 0, context.Canceled},
		{"timed out", 50 * time.Millisecond, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, srv := newFake(t, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			if tc.timeout > 0 {
				ctx, cancel = context.WithTimeout(context.Background(), tc.timeout)
			}
			defer cancel()
			done := callAsync(ctx, client, "slow", nil, nil)
			req := srv.next()
			if tc.timeout == 0 {
				cancel()
			}
			if err := waitErr(t, done); !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			note := srv.next()
			if note.Method != CancelMethod || note.ID != nil {
				t.Fatalf("expected the %s notification, got %+v", CancelMethod, note)
			}
			var params struct{ ID json.RawMessage }
			if err := json.Unmarshal(note.Params, &params); err != nil || string(params.ID) != string(req.ID) {
				t.Fatalf("the cancel names %s, the request was %s", params.ID, req.ID)
			}
			client.conn.mu.Lock()
			pending := len(client.conn.pending)
			client.conn.mu.Unlock()
			if pending != 0 {
				t.Fatalf("%d calls are still pending", pending)
			}
			// The server's late -32800 has no one to go to; the connection carries on.
			srv.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-32800,"message":"Request cancelled","data":{"kind":"cancelled"}}}`)
			next := callAsync(testContext(t), client, "after", nil, nil)
			srv.answer(srv.next(), `{}`)
			if err := waitErr(t, next); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestACancelledCallReturnsAtOnceEvenWhenTheServerHasStoppedReading(t *testing.T) {
	stream, srv := newFakePeer(t)
	stuck := &stallingStream{ObjectStream: stream, writesLeft: 1, release: make(chan struct{})}
	defer close(stuck.release)
	conn := NewConn(stuck, nil, ConnOptions{})
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Call(ctx, "slow", nil, nil) }()
	srv.next() // the request is out; every later write now blocks
	cancel()
	if err := waitErr(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// stallingStream lets a number of writes through, then blocks writers until released, like a
// pipe whose reader has stopped reading.
type stallingStream struct {
	ObjectStream
	mu         sync.Mutex
	writesLeft int
	release    chan struct{}
}

func (s *stallingStream) WriteObject(frame []byte) error {
	s.mu.Lock()
	ok := s.writesLeft > 0
	s.writesLeft--
	s.mu.Unlock()
	if !ok {
		<-s.release
	}
	return s.ObjectStream.WriteObject(frame)
}

func TestACallWithAnAlreadyEndedContextSendsNothing(t *testing.T) {
	client, srv := newFake(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := client.Call(ctx, "never", nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	done := callAsync(testContext(t), client, "first", nil, nil)
	if req := srv.next(); req.Method != "first" {
		t.Fatalf("the server saw %q first", req.Method)
	}
	srv.stream.Close()
	waitErr(t, done)
}

func TestAnErrorAnswerIsAnErrorWithCodeMessageAndData(t *testing.T) {
	for _, tc := range []struct {
		name, frame string
		code        int64
		kind        string
	}{
		{"application error", `{"code":-32010,"message":"bad key","data":{"kind":"invalid_key","key":"a b"}}`, -32010, "invalid_key"},
		{"invalid params", `{"code":-32602,"message":"Invalid params","data":{"kind":"invalid_params","errors":[]}}`, CodeInvalidParams, "invalid_params"},
		{"no data", `{"code":-32603,"message":"Internal error"}`, CodeInternalError, ""},
		{"data without a kind", `{"code":-32000,"message":"x","data":[1,2]}`, -32000, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, srv := newFake(t, Options{})
			done := callAsync(testContext(t), client, "m", nil, nil)
			req := srv.next()
			srv.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":` + tc.frame + `}`)
			err := waitErr(t, done)
			var rpcErr *Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("got %T %v, want *Error", err, err)
			}
			if rpcErr.Code != tc.code || string(rpcErr.Kind()) != tc.kind || rpcErr.Message == "" {
				t.Fatalf("got code %d kind %q message %q", rpcErr.Code, rpcErr.Kind(), rpcErr.Message)
			}
			if errors.Is(err, ErrClosed) {
				t.Fatal("an error answer is not a closed connection")
			}
		})
	}
}

func TestPendingAndLaterCallsFailWithErrClosedWhenThePeerGoesAway(t *testing.T) {
	client, srv := newFake(t, Options{})
	done := callAsync(testContext(t), client, "pending", nil, nil)
	srv.next()
	srv.stream.Close()
	if err := waitErr(t, done); !errors.Is(err, ErrClosed) {
		t.Fatalf("the pending call got %v", err)
	}
	select {
	case <-client.Done():
	case <-time.After(patience):
		t.Fatal("Done was not closed")
	}
	if err := client.Call(testContext(t), "later", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a later call got %v", err)
	}
	if err := client.Notify(testContext(t), "later", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("a later notification got %v", err)
	}
	if errors.Unwrap(client.conn.Err()) == nil {
		t.Fatal("the closed error does not say why")
	}
}

func TestCallsAfterCloseFailWithErrClosed(t *testing.T) {
	client, _ := newFake(t, Options{})
	if err := client.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := client.Close(context.Background()); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := client.Call(testContext(t), "m", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("got %v", err)
	}
}

func TestProviderProduceIsAnsweredByTheProduceFunction(t *testing.T) {
	boom := errors.New("secret internal detail")
	for _, tc := range []struct {
		name    string
		produce ProduceFunc
		params  string
		want    string // the reply's result or error, as JSON
	}{
		{"text", func(_ context.Context, p ProduceParams) (ProduceResult, error) {
			return ProduceResult{Text: Ptr(p.Provider + "|" + p.Session + "|" + p.UserMessage)}, nil
		}, `{"provider":"notes","session":"s1","user_message":"hi"}`, `{"result":{"text":"notes|s1|hi"}}`},
		{"nothing this turn", func(_ context.Context, p ProduceParams) (ProduceResult, error) {
			if p.Session != "" {
				return ProduceResult{Text: Ptr("session should be empty")}, nil
			}
			return ProduceResult{}, nil
		}, `{"provider":"notes","session":null,"user_message":""}`, `{"result":{"text":null}}`},
		{"a plain error stays private", func(context.Context, ProduceParams) (ProduceResult, error) {
			return ProduceResult{}, boom
		}, `{"provider":"p","session":null,"user_message":""}`, `{"error":{"code":-32603,"message":"Internal error","data":{"kind":"internal"}}}`},
		{"an *Error is passed on", func(context.Context, ProduceParams) (ProduceResult, error) {
			return ProduceResult{}, NewError(-32042, "not now", map[string]string{"kind": "busy"})
		}, `{"provider":"p","session":null,"user_message":""}`, `{"error":{"code":-32042,"message":"not now","data":{"kind":"busy"}}}`},
		{"no produce function", nil, `{"provider":"p","session":null,"user_message":""}`,
			`{"error":{"code":-32601,"message":"Method not found","data":{"kind":"method_not_found","method":"provider/produce"}}}`},
		{"params of the wrong shape", func(context.Context, ProduceParams) (ProduceResult, error) {
			return ProduceResult{}, nil
		}, `{"provider":7}`, `{"error":{"code":-32602,"message":"Invalid params","data":{"kind":"invalid_params"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, srv := newFake(t, Options{Produce: tc.produce})
			srv.send(`{"jsonrpc":"2.0","id":"promptd-7","method":"provider/produce","params":` + tc.params + `}`)
			got := srv.next()
			if string(got.ID) != `"promptd-7"` || got.Method != "" {
				t.Fatalf("the reply is %+v", got)
			}
			assertSameJSON(t, replyJSON(got), tc.want)
		})
	}
}

func TestAProduceRequestTheServerCancelsEndsItsContextAndIsAnsweredCancelled(t *testing.T) {
	started := make(chan struct{})
	_, srv := newFake(t, Options{Produce: func(ctx context.Context, _ ProduceParams) (ProduceResult, error) {
		close(started)
		<-ctx.Done()
		return ProduceResult{}, ctx.Err()
	}})
	srv.send(`{"jsonrpc":"2.0","id":"promptd-1","method":"provider/produce","params":{"provider":"p","session":null,"user_message":"x"}}`)
	<-started
	srv.send(`{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"promptd-1"}}`)
	got := srv.next()
	assertSameJSON(t, replyJSON(got), `{"error":{"code":-32800,"message":"Request cancelled","data":{"kind":"cancelled"}}}`)
}

func TestAHandlerResultThatCannotBeSentIsStillAnsweredOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		result any
	}{
		{"not encodable", make(chan int)},
		{"over the size limit", strings.Repeat("x", 4096)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, srv := newFakePeer(t)
			conn := NewConn(stream, HandlerFunc(func(context.Context, *Request) (any, error) {
				return tc.result, nil
			}), ConnOptions{MaxRequestBytes: 1024})
			defer conn.Close()
			srv.send(`{"jsonrpc":"2.0","id":"promptd-1","method":"provider/produce","params":{}}`)
			assertSameJSON(t, replyJSON(srv.next()), `{"error":{"code":-32603,"message":"Internal error","data":{"kind":"internal"}}}`)
			select {
			case extra := <-srv.frames:
				t.Fatalf("a second answer: %+v", extra)
			case <-time.After(50 * time.Millisecond):
			}
		})
	}
}

func TestEventsArriveInOrderAndASlowHandlerNeverHoldsUpAnswers(t *testing.T) {
	release := make(chan struct{})
	events := make(chan Event, 16)
	client, srv := newFake(t, Options{OnEvent: func(e Event) {
		if e.Method == "event/first" {
			<-release
		}
		events <- e
	}})
	srv.send(`{"jsonrpc":"2.0","method":"event/first","params":{"n":1}}`)
	srv.send(`{"jsonrpc":"2.0","method":"not_an_event","params":{}}`)
	srv.send(`{"jsonrpc":"2.0","method":"event/second","params":{"n":2}}`)
	// The first event's handler is blocked; an answer must still get through.
	done := callAsync(testContext(t), client, "m", nil, nil)
	srv.answer(srv.next(), `{}`)
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	close(release)
	for _, want := range []EventName{"event/first", "event/second"} {
		select {
		case e := <-events:
			if e.Method != want {
				t.Fatalf("got %s, want %s", e.Method, want)
			}
		case <-time.After(patience):
			t.Fatalf("%s never arrived", want)
		}
	}
	select {
	case e := <-events:
		t.Fatalf("an unexpected event %s", e.Method)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestFramesThatAnswerNoCallAreIgnoredAndTheConnectionCarriesOn(t *testing.T) {
	client, srv := newFake(t, Options{})
	var got string
	done := callAsync(testContext(t), client, "m", nil, &got)
	req := srv.next()
	for _, frame := range []string{
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"kind":"parse_error"}}}`,
		`{"jsonrpc":"2.0","id":987654,"result":"for nobody"}`,
		`{"jsonrpc":"2.0","id":"a-string","result":"for nobody"}`,
		`this is not json`,
		`[]`,
		// A batch: each answer goes to its own call.
		`[{"jsonrpc":"2.0","id":424242,"result":"x"},{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":"mine"}]`,
	} {
		srv.send(frame)
	}
	if err := waitErr(t, done); err != nil || got != "mine" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestARequestOverTheSizeLimitIsRefusedBeforeItIsSent(t *testing.T) {
	client, srv := newFake(t, Options{Conn: ConnOptions{MaxRequestBytes: 1024}})
	err := client.Call(testContext(t), "big", map[string]string{"body": strings.Repeat("x", 2048)}, nil)
	if !errors.Is(err, ErrMessageTooLarge) {
		t.Fatalf("got %v", err)
	}
	done := callAsync(testContext(t), client, "small", nil, nil)
	if req := srv.next(); req.Method != "small" {
		t.Fatalf("the server saw %q", req.Method)
	}
	srv.stream.Close()
	waitErr(t, done)
}

func TestParamsAreSentAsGivenAndAbsentWhenThereAreNone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params any
		want   string // the params member as sent, "" for absent
	}{
		{"nil", nil, ""},
		{"empty raw message", json.RawMessage(nil), ""},
		{"empty bytes", []byte{}, ""},
		{"raw object", json.RawMessage(`{"a":1}`), `{"a":1}`},
		{"struct", ReminderWrapParams{Key: "k", Body: "<&>"}, `{"key":"k","body":"<&>"}`},
		{"optional fields set", ReminderWrapParams{Key: "k", Nonce: true}, `{"key":"k","body":"","nonce":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, srv := newFake(t, Options{})
			done := callAsync(testContext(t), client, "m", tc.params, nil)
			req := srv.next()
			if string(req.Params) != tc.want {
				t.Fatalf("sent params %s, want %s", req.Params, tc.want)
			}
			if req.JSONRPC != "2.0" {
				t.Fatalf("jsonrpc is %q", req.JSONRPC)
			}
			srv.answer(req, `{}`)
			if err := waitErr(t, done); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestNumbersInUntypedResultsKeepTheirDigits(t *testing.T) {
	client, srv := newFake(t, Options{})
	var got map[string]any
	done := callAsync(testContext(t), client, "m", nil, &got)
	srv.answer(srv.next(), `{"big":123456789012345678901234567890}`)
	if err := waitErr(t, done); err != nil {
		t.Fatal(err)
	}
	if n, ok := got["big"].(json.Number); !ok || n.String() != "123456789012345678901234567890" {
		t.Fatalf("got %#v", got["big"])
	}
}

// replyJSON keeps the result or error member of a reply, for comparison.
func replyJSON(m message) string {
	out := map[string]any{}
	if m.Error != nil {
		out["error"] = m.Error
	} else {
		out["result"] = m.Result
	}
	data, _ := json.Marshal(out)
	return string(data)
}

func assertSameJSON(t *testing.T, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("got invalid JSON %s", got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON %s", want)
	}
	if !sameValue(g, w) {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}
