package promptd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long each step of Close waits for the process to end before taking the
// next, firmer one (ProcessOptions.Grace overrides it). promptd drains in-flight work on
// shutdown, on stdin EOF and on SIGTERM; its provider timeout is 2 s, so a well-behaved server is
// done well within it.
const DefaultGrace = 5 * time.Second

// DefaultStartTimeout bounds Start's initialize handshake when Start's context has no deadline
// (ProcessOptions.StartTimeout overrides it): an executable that is not promptd may never answer.
const DefaultStartTimeout = 30 * time.Second

// ProcessOptions configure the spawned `promptd serve`.
type ProcessOptions struct {
	// Args go before "serve": global flags such as "--config", "promptd.toml", "--log-level", "debug".
	Args []string
	// Env is the process's environment (nil: this process's).
	Env []string
	// Dir is its working directory ("": this process's).
	Dir string
	// OnStderr, when set, receives each line promptd writes to stderr (its JSON-line logs),
	// without the newline, on the goroutine reading stderr (keep it quick). Either way the
	// last StderrLines lines are kept (Client.StderrTail, Start's errors, ExitInfo); stderr
	// never goes to this process's own stderr.
	OnStderr func(line string)
	// StderrLines is how many of the last stderr lines are kept (default DefaultStderrLines).
	StderrLines int
	// Grace is how long each step of Close waits for the process to end before the next one
	// (default DefaultGrace).
	Grace time.Duration
	// StartTimeout bounds the initialize handshake when Start's ctx has no deadline (default
	// DefaultStartTimeout).
	StartTimeout time.Duration
	// MaxResponseBytes bounds one incoming frame (default DefaultMaxResponseBytes).
	MaxResponseBytes int
}

// Stage says how far Close had to go before the process ended.
type Stage int

const (
	// StageNone: the process has not been stopped by Close.
	StageNone Stage = iota
	// StageExit: it ended after shutdown and the exit notification, as it should.
	StageExit
	// StageStdinClosed: it ended once its stdin was closed (EOF drains and exits too).
	StageStdinClosed
	// StageTerminated: it needed SIGTERM.
	StageTerminated
	// StageKilled: it needed SIGKILL.
	StageKilled
)

func (s Stage) String() string {
	switch s {
	case StageExit:
		return "exit"
	case StageStdinClosed:
		return "stdin closed"
	case StageTerminated:
		return "SIGTERM"
	case StageKilled:
		return "SIGKILL"
	}
	return "none"
}

// ShutdownError is Close's error when the process did not end cleanly: it had already ended by
// itself (Stage is StageNone: it crashed or was killed), it needed a signal, or its exit status
// was not 0.
type ShutdownError struct {
	// Stage says how far Close had to go (StageNone: the process had ended before Close).
	Stage Stage
	// Err is the process's wait error, if any (an *exec.ExitError for a status other than 0 or
	// a signal).
	Err error
	// State is the ended process's exit state.
	State *os.ProcessState
	// Stderr holds its last stderr lines, oldest first.
	Stderr []string
}

func (e *ShutdownError) Error() string {
	var b strings.Builder
	switch e.Stage {
	case StageNone:
		b.WriteString("promptd: the process had already ended by itself when Close was called")
	case StageExit:
		b.WriteString("promptd: the process ended after shutdown and exit")
	case StageStdinClosed:
		b.WriteString("promptd: the process ended once its stdin was closed")
	default:
		fmt.Fprintf(&b, "promptd: the process ended only at %s", e.Stage)
	}
	switch {
	case e.State != nil:
		fmt.Fprintf(&b, ": it %s", describeExit(e.State))
	case e.Err != nil:
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	writeStderr(&b, e.Stderr, false)
	return b.String()
}

func (e *ShutdownError) Unwrap() error { return e.Err }

// ExitError is how calls fail once the spawned process has ended by itself (it crashed, was
// killed, or exited) rather than through Close: it matches ErrClosed (errors.Is), and says how
// the process ended and what it last wrote to stderr, as StartError does.
type ExitError struct {
	// State is the process's exit state: exit status, or the signal that ended it. It is nil
	// when the process had not been reaped by the time the call stopped waiting for it (its
	// stdout closed, but it still runs, or a process it started still holds its stderr).
	State *os.ProcessState
	// Stderr holds its last stderr lines, oldest first.
	Stderr []string
	// Err is the connection's error: it matches ErrClosed and says how the connection ended
	// (reading from the peer: EOF).
	Err error
}

func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.State != nil {
		fmt.Fprintf(&b, "; the process %s", describeExit(e.State))
	} else {
		b.WriteString("; the process had not ended yet")
	}
	writeStderr(&b, e.Stderr, e.State != nil)
	return b.String()
}

func (e *ExitError) Unwrap() error { return e.Err }

// exitReportWait bounds how long a call that found the connection closed waits for the process
// to be reaped, so that its error can say how the process ended (a crashed process is reaped at
// once; one whose stdout closed while it keeps running is not waited for longer).
const exitReportWait = 2 * time.Second

// explain turns a call's ErrClosed into an *ExitError when the connection closed because the
// spawned process went away (not because of Close, or of a -32002 refusal): the error then names
// the exit status or the signal, and carries the last stderr lines.
func (c *Client) explain(ctx context.Context, err error) error {
	p := c.proc
	if p == nil || c.closing.Load() || !errors.Is(err, ErrClosed) {
		return err
	}
	connErr := c.conn.Err()
	if connErr == nil || !errors.Is(err, connErr) || errors.Is(connErr, errClosedByClient) {
		return err
	}
	timer := time.NewTimer(exitReportWait)
	defer timer.Stop()
	select {
	case <-p.exited:
	case <-timer.C:
	case <-ctx.Done():
	}
	out := &ExitError{Stderr: p.stderr.tail(), Err: err}
	if p.ended() {
		out.State = p.cmd.ProcessState
	}
	return out
}

// ExitInfo describes how the spawned process ended (Options.OnExit).
type ExitInfo struct {
	// PID was the process id.
	PID int
	// State is the process's exit state: exit status, or the signal that ended it.
	State *os.ProcessState
	// Err is the error waiting for it returned (nil for status 0).
	Err error
	// Stage says how far Close had to go; StageNone when the process ended by itself.
	Stage Stage
	// Stderr holds its last stderr lines.
	Stderr []string
}

// StartError is Start's error when the process could not be started or did not complete the
// initialize handshake: it says why (Err), and what the process left behind.
type StartError struct {
	// Path is the executable Start was given.
	Path string
	// Err is the cause: the spawn's error, the handshake's (an *Error when promptd rejected
	// initialize, a *ProtocolVersionError, ErrClosed when the process went away first, or the
	// context's error).
	Err error
	// State is the ended process's exit state (nil if it was never started).
	State *os.ProcessState
	// Stderr holds its last stderr lines.
	Stderr []string
	// Stdout is the first line it wrote to stdout that was not JSON-RPC, if any (an executable
	// that is not promptd).
	Stdout string
}

func (e *StartError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "promptd: starting %s: %v", e.Path, e.Err)
	if e.State != nil {
		fmt.Fprintf(&b, "; the process %s", describeExit(e.State))
	}
	if e.Stdout != "" {
		fmt.Fprintf(&b, "; it wrote to stdout what is not JSON-RPC (is it promptd?): %q", e.Stdout)
	}
	writeStderr(&b, e.Stderr, e.State != nil)
	return b.String()
}

func (e *StartError) Unwrap() error { return e.Err }

// writeStderr appends the last (at most 10) stderr lines to an error's text, or, when the
// process has ended and wrote nothing (sayNone), that it wrote nothing.
func writeStderr(b *strings.Builder, stderr []string, sayNone bool) {
	if len(stderr) > 0 {
		lines := stderr[max(0, len(stderr)-10):]
		fmt.Fprintf(b, "; its last stderr lines:\n\t%s", strings.Join(lines, "\n\t"))
	} else if sayNone {
		b.WriteString("; it wrote nothing to stderr")
	}
}

// describeExit says how a process ended: "exited with status 2", "was killed by SIGKILL".
func describeExit(state *os.ProcessState) string {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return "was killed by " + signalName(ws.Signal())
	}
	return fmt.Sprintf("exited with status %d", state.ExitCode())
}

// signalName is a signal's conventional name (SIGKILL), which Go's Signal.String ("killed") is not.
func signalName(sig syscall.Signal) string {
	if name, ok := signalNames[sig]; ok {
		return name
	}
	return fmt.Sprintf("signal %d (%s)", int(sig), sig)
}

// The signals every platform's syscall package defines.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
}

type process struct {
	cmd    *exec.Cmd
	stdin  *os.File // our end of its stdin: closing it is the server's EOF
	grace  time.Duration
	stderr *stderrTail

	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // cmd.Wait's result, set before exited closes

	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex
	stage    Stage
	closing  bool // Close has begun: it reports the exit, with its stage
	reported bool // the exit has been reported to OnExit
}

// Start spawns `<path> [opts.Process.Args...] serve`, connects to it and performs the initialize
// handshake (Options.Initialize) within ctx (or StartTimeout when ctx has no deadline). path is
// the promptd executable (tests take it from $PROMPTD). When the process cannot be started, or
// does not complete the handshake (bad configuration, not promptd, a missing Python module, a
// protocol version other than ProtocolVersion), Start stops it and returns a *StartError saying
// why, with the exit status and the last stderr lines. Call Close to end a started client.
func Start(ctx context.Context, path string, opts Options) (*Client, error) {
	po := opts.Process
	if po.Grace <= 0 {
		po.Grace = DefaultGrace
	}
	if po.StartTimeout <= 0 {
		po.StartTimeout = DefaultStartTimeout
	}
	if po.MaxResponseBytes <= 0 {
		po.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if po.StderrLines <= 0 {
		po.StderrLines = DefaultStderrLines
	}
	// Plain pipes rather than cmd.StdinPipe/StdoutPipe: exec closes those when the process is
	// reaped, which could drop answers still buffered in the pipe; with our own ends, the reader
	// sees everything and then EOF.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, &StartError{Path: path, Err: err}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, &StartError{Path: path, Err: err}
	}
	tail := newStderrTail(po.StderrLines, po.OnStderr)
	cmd := exec.Command(path, append(append([]string{}, po.Args...), "serve")...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, tail
	cmd.Env, cmd.Dir = po.Env, po.Dir
	// Bounds the wait for the stderr copy when a grandchild still holds the descriptor.
	cmd.WaitDelay = po.Grace
	err = cmd.Start()
	inR.Close() // the child holds its own copies now
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, &StartError{Path: path, Err: err}
	}
	p := &process{cmd: cmd, stdin: inW, grace: po.Grace, stderr: tail, exited: make(chan struct{})}
	c := NewClient(NewLineStream(outR, inW, po.MaxResponseBytes), opts)
	c.proc = p
	go func() {
		p.waitErr = cmd.Wait()
		tail.flush()
		close(p.exited)
		p.mu.Lock()
		byItself := !p.closing && !p.reported
		p.reported = p.reported || byItself
		p.mu.Unlock()
		if byItself {
			c.reportExit(StageNone)
		}
	}()
	if err := c.initialize(ctx, po.StartTimeout); err != nil {
		return nil, c.failStart(path, err)
	}
	return c, nil
}

// initialize performs the handshake Start owes its caller.
func (c *Client) initialize(ctx context.Context, timeout time.Duration) error {
	params := c.opts.Initialize
	if params.ProtocolVersion == nil {
		params.ProtocolVersion = Ptr(ProtocolVersion)
	}
	if params.ClientInfo == nil {
		params.ClientInfo = &ClientInfo{Name: "promptd-go"}
	}
	if params.Capabilities == nil {
		params.Capabilities = &Capabilities{HostProviders: c.opts.Produce != nil, Events: BoolOrList[EventName]{All: c.opts.OnEvent != nil}}
	}
	if params.OffsetUnit == nil {
		// Offsets in results (citation/parse, reminder/parse, content/inspect) count UTF-8
		// bytes, so text[seg.Start:seg.End] is the span.
		params.OffsetUnit = Ptr(InitializeParamsOffsetUnitUTF8Bytes)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	res, err := c.Initialize(ctx, params)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("no answer to initialize: %w", err)
		}
		if errors.Is(err, ErrClosed) {
			// StartError reports the exit and the stderr lines itself.
			var exitErr *ExitError
			if errors.As(err, &exitErr) {
				err = exitErr.Err
			}
			return fmt.Errorf("its stdout closed before it answered initialize (%w)", err)
		}
		return err
	}
	if res.ProtocolVersion != *params.ProtocolVersion {
		return &ProtocolVersionError{Client: *params.ProtocolVersion, Server: res.ProtocolVersion}
	}
	c.handshake = res
	// Follow the server's own request size limit unless the caller chose one (Options.Conn).
	// Nothing else is sent before Start returns, so no send reads the field concurrently.
	if c.opts.Conn.MaxRequestBytes <= 0 && res.Limits.MaxMessageBytes > 0 {
		c.conn.opts.MaxRequestBytes = int(res.Limits.MaxMessageBytes)
	}
	return nil
}

// failStart stops a process whose handshake failed and describes what it left behind.
func (c *Client) failStart(path string, cause error) error {
	p := c.proc
	// A process that rejected initialize, or spoke another protocol version, is a working
	// promptd: it is asked to shut down. One that went away or never answered is not: its
	// stdin is closed, then it is signalled.
	var rpcErr *Error
	var verErr *ProtocolVersionError
	cooperative := errors.As(cause, &rpcErr) || errors.As(cause, &verErr)
	if !cooperative && c.conn.Err() != nil {
		// Its stdout has closed: it is most likely exiting; give it the time to be reaped.
		p.wait(context.Background(), p.grace)
	}
	p.closeOnce.Do(func() {
		c.closing.Store(true)
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		stage := p.stop(context.Background(), c.conn, cooperative)
		c.conn.Close()
		c.finishClose(stage)
	})
	err := &StartError{Path: path, Err: cause, Stderr: p.stderr.tail(), Stdout: c.conn.strayOutput()}
	err.State = p.cmd.ProcessState
	return err
}

// Close ends the session in order: the shutdown request (promptd drains in-flight work) and the
// exit notification, waiting up to Grace (and no later than ctx) for the process to end; then,
// each only if the process is still running: close its stdin and wait Grace, SIGTERM and wait
// Grace, SIGKILL. ctx bounds only the first, cooperative step: a process is always offered
// stdin EOF and SIGTERM before SIGKILL, so Close may return up to 2×Grace after ctx ends; only a
// ctx that has already ended when Close is called kills at once. Calls made once Close has
// begun, or refused by promptd because it has shut down, fail with ErrClosed. Close returns nil
// when the process ended by itself with status 0, a *ShutdownError otherwise. For a client made
// with NewClient, Close only closes the connection. Safe to call more than once.
func (c *Client) Close(ctx context.Context) error {
	c.closing.Store(true)
	if c.proc == nil {
		return c.conn.Close()
	}
	p := c.proc
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closing = true
		p.mu.Unlock()
		stage := p.stop(ctx, c.conn, true)
		c.conn.Close()
		p.closeErr = c.finishClose(stage)
	})
	return p.closeErr
}

// finishClose records how far Close went and reports the exit, unless the process had already
// ended by itself and been reported.
func (c *Client) finishClose(stage Stage) error {
	p := c.proc
	err := p.outcome(stage)
	p.mu.Lock()
	p.stage = stage
	report := !p.reported
	p.reported = true
	p.mu.Unlock()
	if report {
		c.reportExit(stage)
	}
	return err
}

func (c *Client) reportExit(stage Stage) {
	if c.opts.OnExit == nil {
		return
	}
	p := c.proc
	info := ExitInfo{PID: p.cmd.Process.Pid, State: p.cmd.ProcessState, Err: p.waitErr, Stage: stage, Stderr: p.stderr.tail()}
	c.hooks.do(func() { c.opts.OnExit(info) })
}

// PID is the spawned process's id (0 for a NewClient client).
func (c *Client) PID() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.cmd.Process.Pid
}

// StderrTail returns the last lines the spawned process wrote to stderr, oldest first (nil for a
// NewClient client).
func (c *Client) StderrTail() []string {
	if c.proc == nil {
		return nil
	}
	return c.proc.stderr.tail()
}

// Stage reports how far Close had to go: StageNone before Close, for a NewClient client, and
// when the process had already ended by itself.
func (c *Client) Stage() Stage {
	if c.proc == nil {
		return StageNone
	}
	c.proc.mu.Lock()
	defer c.proc.mu.Unlock()
	return c.proc.stage
}

// Exited is closed once the spawned process has ended (nil for NewClient clients).
func (c *Client) Exited() <-chan struct{} {
	if c.proc == nil {
		return nil
	}
	return c.proc.exited
}

func (p *process) stop(ctx context.Context, conn *Conn, cooperative bool) Stage {
	if p.ended() || conn.Err() != nil && p.wait(ctx, p.grace) {
		// It ended by itself (a closed connection most likely means it is being reaped).
		return StageNone
	}
	if ctx.Err() != nil {
		// The caller's time was up before Close began: no step gentler than SIGKILL fits in it.
		p.stdin.Close()
		_ = p.cmd.Process.Kill()
		<-p.exited
		return StageKilled
	}
	if cooperative && conn.Err() == nil {
		deadline := time.Now().Add(p.grace)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		step, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		// On a goroutine of its own: a server that has stopped reading would block these writes,
		// and closing its stdin below is what unblocks them.
		go func() {
			call, cancelCall := context.WithDeadline(context.Background(), deadline)
			// The answer does not matter: if shutdown fails, exit still ends the process (with
			// status 1), and the steps below cover a server that does neither.
			_ = conn.Call(call, "shutdown", nil, nil)
			cancelCall()
			_ = conn.Notify(context.Background(), "exit", nil)
		}()
		if p.wait(step, p.grace) {
			return StageExit
		}
	}
	p.stdin.Close()
	if p.wait(context.Background(), p.grace) {
		return StageStdinClosed
	}
	// SIGTERM does not exist on Windows; Signal fails there and the next step kills.
	if p.cmd.Process.Signal(syscall.SIGTERM) == nil && p.wait(context.Background(), p.grace) {
		return StageTerminated
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return StageKilled
}

func (p *process) ended() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to end; false if it has not.
func (p *process) wait(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	case <-ctx.Done():
		return p.ended()
	}
}

func (p *process) outcome(stage Stage) error {
	if stage >= StageTerminated || p.waitErr != nil {
		return &ShutdownError{Stage: stage, Err: p.waitErr, State: p.cmd.ProcessState, Stderr: p.stderr.tail()}
	}
	return nil
}
