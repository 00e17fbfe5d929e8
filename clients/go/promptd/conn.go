package promptd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// CancelMethod is the notification that cancels a request in flight (the LSP name, which promptd
// keeps so that standard clients' cancellation works).
const CancelMethod = "$/cancelRequest"

// DefaultMaxRequestBytes is promptd's default max_message_bytes: a longer request would be
// answered with an error carrying a null id, which no call can be matched with.
const DefaultMaxRequestBytes = 16 << 20

// DefaultMaxResponseBytes bounds one incoming frame. The server accepts 16 MiB requests and
// escaping can make a body up to five times longer (& becomes &amp;), so the bound is well above
// that; it exists only so that a runaway peer cannot make the client buffer without limit.
const DefaultMaxResponseBytes = 256 << 20

// Request is a request or notification the server sent to the client.
type Request struct {
	Method string
	Params json.RawMessage
	// ID is the request's id as sent (promptd's are strings starting with "promptd-"); nil for
	// a notification.
	ID json.RawMessage
}

// IsNotification reports whether the request expects no answer.
func (r *Request) IsNotification() bool { return r.ID == nil }

// Handler serves what the server sends to the client. Requests are served concurrently, each on
// its own goroutine, and their context is cancelled when the server cancels them or the
// connection closes; the returned result (or error) is the answer. Notifications are served one
// at a time, in the order they arrived, on one goroutine; their result is ignored. An error that
// is not an *Error is answered as an internal error, so that its text stays in this process.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Direction says which way a traced frame went.
type Direction int

const (
	// Sent is a frame this client wrote.
	Sent Direction = iota
	// Received is a frame the peer wrote.
	Received
)

// ConnOptions tune a Conn; the zero value is ready to use.
type ConnOptions struct {
	// MaxRequestBytes refuses larger outgoing frames with ErrMessageTooLarge (default
	// DefaultMaxRequestBytes; raise it together with the server's max_message_bytes).
	MaxRequestBytes int
	// Trace, when set, sees every frame in both directions (for debugging; it runs on the
	// reading or writing goroutine, so keep it quick, and it sees message bodies).
	Trace func(dir Direction, frame []byte)
	// OnError, when set, is told what went wrong while serving the server's requests and
	// notifications: a handler's panic (*PanicError; the server is answered with an internal
	// error and the connection stays up) or an answer that could not be sent. It runs on the
	// serving goroutine; Client runs Options.OnError through it, on a goroutine of its own.
	OnError func(error)
}

// Conn is a JSON-RPC 2.0 connection: it numbers and correlates calls, serves what the server
// sends, and fails every pending call with ErrClosed when the stream ends.
type Conn struct {
	stream  ObjectStream
	handler Handler
	opts    ConnOptions

	// ctx is the parent of every handler context; cancelled when the connection closes.
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	seq      int64
	pending  map[int64]chan result
	incoming map[string]context.CancelFunc
	closeErr error // set once, when the connection closes
	done     chan struct{}
	stray    []byte // the first line from the peer that was not JSON-RPC (for Start's errors)

	notes *serial
}

type result struct {
	msg *message
	err error
}

// message is any frame on the wire; which fields are present says what it is.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// outgoing is a request or notification this client sends; a notification has no id.
type outgoing struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// NewConn starts reading stream at once. handler may be nil: then server-to-client requests are
// answered "method not found" and notifications are dropped.
func NewConn(stream ObjectStream, handler Handler, opts ConnOptions) *Conn {
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = DefaultMaxRequestBytes
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Conn{
		stream:   stream,
		handler:  handler,
		opts:     opts,
		ctx:      ctx,
		cancel:   cancel,
		pending:  make(map[int64]chan result),
		incoming: make(map[string]context.CancelFunc),
		done:     make(chan struct{}),
	}
	c.notes = &serial{}
	go c.readLoop()
	return c
}

// Call sends a request and waits for its answer, which is decoded into result (a pointer; nil to
// ignore it; *json.RawMessage to keep it raw). Numbers inside `any` values decode as
// json.Number, so large integers survive. An error answer is returned as *Error. When ctx ends
// first, the call is forgotten, the server is sent $/cancelRequest for it, and ctx.Err() is
// returned; the server's late answer (-32800 or a result) is discarded. (Only the wait is bound
// to ctx: a request's own write, once started, completes or fails with the stream.)
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	id, wait, err := c.register()
	if err != nil {
		return err
	}
	if err := c.send(outgoing{JSONRPC: "2.0", ID: &id, Method: method, Params: normalizeParams(params)}); err != nil {
		c.forget(id)
		return err
	}
	select {
	case res := <-wait:
		return decodeAnswer(res, result)
	case <-ctx.Done():
		if !c.forget(id) {
			// The answer was delivered while ctx ended; it is the more useful outcome.
			return decodeAnswer(<-wait, result)
		}
		// Sent from its own goroutine so that a server which has stopped reading cannot hold
		// the caller past its context; best effort, since a closed connection has nothing left
		// to cancel.
		go func() { _ = c.Notify(context.Background(), CancelMethod, map[string]int64{"id": id}) }()
		return ctx.Err()
	}
}

// Notify sends a notification (no answer). ctx is checked before sending only: a write is not
// interruptible once started.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.Err(); err != nil {
		return err
	}
	return c.send(outgoing{JSONRPC: "2.0", Method: method, Params: normalizeParams(params)})
}

// Close ends the connection: the stream is closed, pending calls fail with ErrClosed and handler
// contexts are cancelled. It is safe to call more than once.
func (c *Conn) Close() error {
	first := c.shut(errClosedByClient)
	if !first {
		return nil
	}
	return c.stream.Close()
}

// Done is closed when the connection has closed, by either side.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is nil while the connection is open, then an error matching ErrClosed that says why it
// closed.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

func (c *Conn) register() (int64, chan result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closeErr != nil {
		return 0, nil, c.closeErr
	}
	c.seq++
	wait := make(chan result, 1) // buffered: the reader never blocks on a caller that left
	c.pending[c.seq] = wait
	return c.seq, wait, nil
}

// forget removes a pending call; false when its answer was already handed over.
func (c *Conn) forget(id int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

func (c *Conn) send(frame any) error {
	data, err := encode(frame)
	if err != nil {
		return fmt.Errorf("promptd: encoding the message: %w", err)
	}
	if len(data) > c.opts.MaxRequestBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d", ErrMessageTooLarge, len(data), c.opts.MaxRequestBytes)
	}
	if c.opts.Trace != nil {
		c.opts.Trace(Sent, data)
	}
	if err := c.stream.WriteObject(data); err != nil {
		c.shut(fmt.Errorf("writing to the peer: %w", err))
		return c.Err()
	}
	return nil
}

func (c *Conn) readLoop() {
	for {
		data, err := c.stream.ReadObject()
		if err != nil {
			if c.shut(fmt.Errorf("reading from the peer: %w", err)) {
				c.stream.Close()
			}
			return
		}
		if c.opts.Trace != nil {
			c.opts.Trace(Received, data)
		}
		c.dispatch(data)
	}
}

func (c *Conn) dispatch(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return
	}
	if data[0] == '[' { // a batch: promptd sends one only in answer to a batch, but it is valid JSON-RPC
		var frames []json.RawMessage
		if json.Unmarshal(data, &frames) != nil {
			return
		}
		for _, frame := range frames {
			if len(frame) > 0 {
				c.dispatch(frame)
			}
		}
		return
	}
	var msg message
	if json.Unmarshal(data, &msg) != nil {
		// Not JSON-RPC; promptd keeps stray output off the wire, so this is noise, not a reply.
		// The first such line is kept: when the executable is not promptd, it says what it is.
		c.mu.Lock()
		if c.stray == nil {
			c.stray = append([]byte(nil), data[:min(len(data), 200)]...)
		}
		c.mu.Unlock()
		return
	}
	switch {
	case msg.Method != "" && msg.ID != nil:
		c.serveRequest(&msg)
	case msg.Method != "":
		if msg.Method == CancelMethod {
			c.cancelIncoming(msg.Params)
			return
		}
		note := &Request{Method: msg.Method, Params: msg.Params}
		c.notes.do(func() { c.serveNotification(note) })
	default:
		c.settle(&msg)
	}
}

func (c *Conn) settle(msg *message) {
	var id int64
	if json.Unmarshal(msg.ID, &id) != nil {
		return // a null id (an error about an unreadable frame) or an id this client never uses
	}
	c.mu.Lock()
	wait, ok := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if ok {
		wait <- result{msg: msg}
	}
}

func (c *Conn) serveRequest(msg *message) {
	id := compact(msg.ID)
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	c.incoming[string(id)] = cancel
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			delete(c.incoming, string(id))
			c.mu.Unlock()
			cancel()
		}()
		out := reply{JSONRPC: "2.0", ID: msg.ID}
		if c.handler == nil {
			out.Error = NewError(CodeMethodNotFound, "Method not found", map[string]string{"kind": "method_not_found", "method": msg.Method})
		} else {
			res, err := c.handle(ctx, &Request{Method: msg.Method, Params: msg.Params, ID: msg.ID})
			out.Result, out.Error = answerFor(ctx, res, err)
		}
		if err := c.send(out); err != nil && c.Err() == nil {
			c.report(fmt.Errorf("promptd: answering %s: %w", msg.Method, err))
			// The answer could not be encoded or is over the size limit: promptd still gets
			// exactly one answer rather than waiting for its timeout. (A failed write closes
			// the connection; then there is no one left to tell.)
			out.Result, out.Error = nil, NewError(CodeInternalError, "Internal error", map[string]string{"kind": "internal"})
			_ = c.send(out)
		}
	}()
}

// answerFor shapes a handler's outcome for the wire, never sending a plain error's text.
func answerFor(ctx context.Context, res any, err error) (any, *Error) {
	if err == nil {
		if res == nil {
			res = struct{}{} // "result" must be present in a success answer
		}
		return res, nil
	}
	var rpcErr *Error
	if errors.As(err, &rpcErr) {
		return nil, rpcErr
	}
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil, NewError(CodeRequestCancelled, "Request cancelled", map[string]string{"kind": "cancelled"})
	}
	return nil, NewError(CodeInternalError, "Internal error", map[string]string{"kind": "internal"})
}

func (c *Conn) cancelIncoming(params json.RawMessage) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil || p.ID == nil {
		return
	}
	c.mu.Lock()
	cancel := c.incoming[string(compact(p.ID))]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *Conn) serveNotification(req *Request) {
	if c.handler != nil {
		_, _ = c.handle(c.ctx, req)
	}
}

// handle runs the handler, turning a panic into a *PanicError that is reported and answered as
// an internal error: a host's bug in one callback must not take the host down.
func (c *Conn) handle(ctx context.Context, req *Request) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			perr := &PanicError{Method: req.Method, Value: v, Stack: debug.Stack()}
			c.report(perr)
			res, err = nil, perr
		}
	}()
	return c.handler.Handle(ctx, req)
}

func (c *Conn) report(err error) {
	if c.opts.OnError != nil {
		c.opts.OnError(err)
	}
}

// strayOutput is the first line the peer sent that was not JSON-RPC, or "".
func (c *Conn) strayOutput() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.stray)
}

// shut records why the connection closed and fails everything waiting; true the first time.
func (c *Conn) shut(cause error) bool {
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		return false
	}
	c.closeErr = &closedError{cause: cause}
	pending := c.pending
	c.pending = make(map[int64]chan result)
	c.mu.Unlock()
	for _, wait := range pending {
		wait <- result{err: c.closeErr}
	}
	c.cancel()
	c.notes.close()
	close(c.done)
	return true
}

func decodeAnswer(res result, into any) error {
	if res.err != nil {
		return res.err
	}
	if res.msg.Error != nil {
		if res.msg.Error.Code == CodeServerShutDown {
			// After shutdown every call is refused; that is the connection closing, and it has
			// one shape whichever side got there first: ErrClosed, not an *Error.
			return &closedError{cause: errServerShutDown}
		}
		return res.msg.Error
	}
	if into == nil {
		return nil
	}
	if raw, ok := into.(*json.RawMessage); ok {
		*raw = append((*raw)[:0], res.msg.Result...)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(res.msg.Result))
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return fmt.Errorf("promptd: decoding the result: %w", err)
	}
	return nil
}

// normalizeParams turns "no params" in its several Go spellings into an absent field: an empty
// json.RawMessage inside an interface would otherwise be written as an invalid empty value.
func normalizeParams(params any) any {
	switch p := params.(type) {
	case json.RawMessage:
		if len(p) == 0 {
			return nil
		}
	case []byte:
		if len(p) == 0 {
			return nil
		}
		return json.RawMessage(p)
	}
	return params
}

func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Reminder bodies are full of < > &: escaping them as \u003c would only make frames longer.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// compact gives one spelling per JSON id, so that a cancel names the request it means.
func compact(raw json.RawMessage) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}
