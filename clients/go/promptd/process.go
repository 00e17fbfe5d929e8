package promptd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long each step of Close waits for the process to end before taking the
// next, firmer one. promptd drains in-flight work on shutdown and on stdin EOF; 2 s is its
// provider timeout, so a well-behaved server is done well within it.
const DefaultGrace = 2 * time.Second

// ProcessOptions configure the spawned `promptd serve`.
type ProcessOptions struct {
	// Args go before "serve": global flags such as "--config", "promptd.toml", "--log-level", "debug".
	Args []string
	// Env is the process's environment (nil: this process's).
	Env []string
	// Dir is its working directory ("": this process's).
	Dir string
	// Stderr receives promptd's JSON-line logs (nil: discarded).
	Stderr io.Writer
	// Grace is how long each step of Close waits for the process to end before the next one
	// (default DefaultGrace); the first step, shutdown then exit, gets two.
	Grace time.Duration
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

// ShutdownError is Close's error when the process did not end cleanly: it needed a signal, or
// its exit status was not 0. Err is the process's wait error, if any.
type ShutdownError struct {
	Stage Stage
	Err   error
}

func (e *ShutdownError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("promptd: the process ended only at %s", e.Stage)
	}
	return fmt.Sprintf("promptd: the process ended at %s: %v", e.Stage, e.Err)
}

func (e *ShutdownError) Unwrap() error { return e.Err }

type process struct {
	cmd   *exec.Cmd
	stdin *os.File // our end of its stdin: closing it is the server's EOF
	grace time.Duration

	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // cmd.Wait's result, set before exited closes

	closeOnce sync.Once
	closeErr  error

	mu    sync.Mutex
	stage Stage
}

// Start spawns `<path> [opts.Process.Args...] serve` and connects to it. path is the promptd
// executable (tests take it from $PROMPTD). Call Close to end it.
func Start(path string, opts Options) (*Client, error) {
	po := opts.Process
	if po.Grace <= 0 {
		po.Grace = DefaultGrace
	}
	if po.MaxResponseBytes <= 0 {
		po.MaxResponseBytes = DefaultMaxResponseBytes
	}
	// Plain pipes rather than cmd.StdinPipe/StdoutPipe: exec closes those when the process is
	// reaped, which could drop answers still buffered in the pipe; with our own ends, the reader
	// sees everything and then EOF.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(path, append(append([]string{}, po.Args...), "serve")...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, po.Stderr
	cmd.Env, cmd.Dir = po.Env, po.Dir
	// Bounds the wait for the stderr copy when a grandchild still holds the descriptor.
	cmd.WaitDelay = po.Grace
	err = cmd.Start()
	inR.Close() // the child holds its own copies now
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("promptd: starting %s: %w", path, err)
	}
	p := &process{cmd: cmd, stdin: inW, grace: po.Grace, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	c := NewClient(NewLineStream(outR, inW, po.MaxResponseBytes), opts)
	c.proc = p
	return c, nil
}

// Close ends the session in order: the shutdown request (promptd drains in-flight work), the
// exit notification, and, each only if the process has not ended within the grace period: close
// its stdin, SIGTERM, SIGKILL. When ctx ends first, the process is killed at once. It returns
// nil when the process ended by itself with status 0, a *ShutdownError otherwise. For a client
// made with NewClient, Close only closes the connection. Safe to call more than once.
func (c *Client) Close(ctx context.Context) error {
	if c.proc == nil {
		return c.conn.Close()
	}
	p := c.proc
	p.closeOnce.Do(func() {
		stage, err := p.stop(ctx, c.conn)
		c.conn.Close()
		p.mu.Lock()
		p.stage, p.closeErr = stage, err
		p.mu.Unlock()
	})
	return p.closeErr
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

func (p *process) stop(ctx context.Context, conn *Conn) (Stage, error) {
	if conn.Err() != nil {
		// The connection is gone: most likely the process ended by itself and is being reaped.
		if p.wait(ctx, p.grace) {
			return p.outcome(StageNone)
		}
	} else {
		// On a goroutine of its own: a server that has stopped reading would block these writes,
		// and closing its stdin below is what unblocks them.
		go func() {
			step, cancel := context.WithTimeout(ctx, p.grace)
			// The answer does not matter: if shutdown fails, exit still ends the process (with
			// status 1), and the steps below cover a server that does neither.
			_ = conn.Call(step, "shutdown", nil, nil)
			cancel()
			_ = conn.Notify(ctx, "exit", nil)
		}()
		// One grace period for shutdown's answer (promptd drains first), one for exit.
		if p.wait(ctx, 2*p.grace) {
			return p.outcome(StageExit)
		}
	}
	p.stdin.Close()
	if p.wait(ctx, p.grace) {
		return p.outcome(StageStdinClosed)
	}
	// SIGTERM does not exist on Windows; Signal fails there and the next step kills.
	if ctx.Err() == nil && p.cmd.Process.Signal(syscall.SIGTERM) == nil && p.wait(ctx, p.grace) {
		return p.outcome(StageTerminated)
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return p.outcome(StageKilled)
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

func (p *process) outcome(stage Stage) (Stage, error) {
	if stage >= StageTerminated || p.waitErr != nil {
		return stage, &ShutdownError{Stage: stage, Err: p.waitErr}
	}
	return stage, nil
}
