package promptd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The escalation steps of Close need servers that misbehave in specific ways; the test binary
// plays them (TestHelperProcess), so each step is reached on purpose.

const helperEnv = "PROMPTD_GO_HELPER_MODE"

func TestCloseEscalatesOnlyAsFarAsTheProcessMakesItGo(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the steps past stdin use Unix signals")
	}
	for _, tc := range []struct {
		mode  string
		stage Stage
		clean bool
	}{
		{"ignores-exit", StageStdinClosed, true},
		{"ignores-eof", StageTerminated, false},
		{"ignores-sigterm", StageKilled, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			client, err := Start(testContext(t), os.Args[0], Options{Process: ProcessOptions{
				Args: []string{"-test.run=^TestHelperProcess$", "--"},
				// Under -race a process sleeps 1 s at exit by default, which would blur the steps.
				Env:   append(os.Environ(), helperEnv+"="+tc.mode, "GORACE=atexit_sleep_ms=0"),
				Grace: 500 * time.Millisecond,
			}})
			if err != nil {
				t.Fatal(err)
			}
			// A round trip first, so that the helper is up (and has set up its signals).
			if _, err := client.ReminderKeys(testContext(t)); err != nil {
				t.Fatal(err)
			}
			err = client.Close(testContext(t))
			if client.Stage() != tc.stage {
				t.Fatalf("ended at %s, want %s (err %v)", client.Stage(), tc.stage, err)
			}
			var shut *ShutdownError
			if tc.clean != (err == nil) || !tc.clean && (!errors.As(err, &shut) || shut.Stage != tc.stage) {
				t.Fatalf("Close returned %v", err)
			}
			select {
			case <-client.Exited():
			default:
				t.Fatal("Close returned before the process was reaped")
			}
		})
	}
}

// TestHelperProcess is not a test: it is the misbehaving server the test above spawns.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("only runs as a helper process")
	}
	switch mode {
	case "not-promptd":
		fmt.Println("usage: not-promptd [flags]")
		fmt.Fprintln(os.Stderr, "not-promptd: unknown command \"serve\"")
		os.Exit(3)
	case "silent":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	if mode == "ignores-sigterm" {
		signal.Ignore(syscall.SIGTERM)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var msg message
		if json.Unmarshal(in.Bytes(), &msg) != nil || msg.ID == nil {
			continue // exit and every other notification: ignored, which is the point
		}
		if msg.Method == "initialize" {
			fmt.Printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocol_version\":%q,\"server_info\":{\"name\":\"helper\",\"version\":\"0\"},\"methods\":[]}}\n", msg.ID, ProtocolVersion)
			continue
		}
		fmt.Printf("{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"keys\":[]}}\n", msg.ID)
	}
	if mode == "ignores-exit" {
		os.Exit(0) // EOF ends it, as it does promptd
	}
	for { // deaf to EOF; only a signal ends it
		time.Sleep(time.Hour)
	}
}

// startHelper starts the test binary playing a server in the given mode.
func startHelper(ctx context.Context, mode string, opts Options) (*Client, error) {
	opts.Process.Args = []string{"-test.run=^TestHelperProcess$", "--"}
	opts.Process.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	if opts.Process.Grace == 0 {
		opts.Process.Grace = 500 * time.Millisecond
	}
	return Start(ctx, os.Args[0], opts)
}

func TestCloseOffersSIGTERMBeforeSIGKILLEvenWhenItsContextEndsFirst(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM is Unix")
	}
	client, err := startHelper(testContext(t), "ignores-eof", Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = client.Close(ctx)
	var shut *ShutdownError
	if client.Stage() != StageTerminated || !errors.As(err, &shut) || shut.Stage != StageTerminated {
		t.Fatalf("ended at %s: %v; want SIGTERM to have ended it", client.Stage(), err)
	}
}

func TestTheDefaultGraceIsFiveSecondsPerStep(t *testing.T) {
	if DefaultGrace != 5*time.Second {
		t.Fatalf("DefaultGrace is %s", DefaultGrace)
	}
}

func TestStartSaysWhyTheProcessDidNotBecomeASession(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the helpers are Unix")
	}
	badConfig := filepath.Join(t.TempDir(), "promptd.toml")
	if err := os.WriteFile(badConfig, []byte("no_such_setting = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missingModule := filepath.Join(t.TempDir(), "promptd")
	// What a console script looks like when its package is not installed in its interpreter.
	script := "#!/bin/sh\nexec python3 -c 'from promptd_not_installed.cli import main; main()' \"$@\"\n"
	if err := os.WriteFile(missingModule, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		start func(ctx context.Context) (*Client, error)
		want  []string // in the error's text
	}{
		{"a bad configuration", func(ctx context.Context) (*Client, error) {
			return Start(ctx, sidecar(t), Options{Process: ProcessOptions{Args: []string{"--config", badConfig}}})
		}, []string{"exited with status 2", "no_such_setting"}},
		{"not promptd", func(ctx context.Context) (*Client, error) {
			return startHelper(ctx, "not-promptd", Options{})
		}, []string{"exited with status 3", "usage: not-promptd", `unknown command "serve"`}},
		{"a missing Python module", func(ctx context.Context) (*Client, error) {
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("no python3")
			}
			return Start(ctx, missingModule, Options{})
		}, []string{"exited with status 1", "ModuleNotFoundError", "promptd_not_installed"}},
		{"no answer", func(context.Context) (*Client, error) {
			// A context without a deadline, so that StartTimeout bounds the handshake.
			return startHelper(context.Background(), "silent", Options{Process: ProcessOptions{StartTimeout: 300 * time.Millisecond}})
		}, []string{"no answer to initialize", "deadline exceeded", "exited with status 0"}},
		{"another protocol version", func(ctx context.Context) (*Client, error) {
			return Start(ctx, sidecar(t), Options{Initialize: InitializeParams{ProtocolVersion: Ptr("1999-01-01")}})
		}, []string{"protocol version mismatch", "1999-01-01", ProtocolVersion}},
		{"a missing executable", func(ctx context.Context) (*Client, error) {
			return Start(ctx, filepath.Join(t.TempDir(), "no-promptd-here"), Options{})
		}, []string{"no-promptd-here", "no such file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client, err := tc.start(testContext(t))
			if err == nil {
				client.Close(testContext(t))
				t.Fatal("Start succeeded")
			}
			t.Log(err)
			var serr *StartError
			if !errors.As(err, &serr) {
				t.Fatalf("got %T %v", err, err)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not say %q:\n%v", want, err)
				}
			}
			if errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "exited") {
				t.Errorf("a bare EOF: %v", err)
			}
		})
	}
}

func TestTheProtocolVersionMismatchNamesBothVersions(t *testing.T) {
	_, err := Start(testContext(t), sidecar(t), Options{Initialize: InitializeParams{ProtocolVersion: Ptr("1999-01-01")}})
	var verr *ProtocolVersionError
	if !errors.As(err, &verr) || verr.Client != "1999-01-01" || verr.Server != ProtocolVersion {
		t.Fatalf("got %v", err)
	}
}

func TestStderrIsKeptInABoundedTailAndHandedToTheHook(t *testing.T) {
	tail := newStderrTail(3, nil)
	var seen []string
	tail.onLine = func(line string) { seen = append(seen, line) }
	fmt.Fprint(tail, "one\ntwo\r\nthr")
	fmt.Fprint(tail, "ee\nfour\n"+strings.Repeat("x", maxStderrLine+10))
	tail.flush()
	want := []string{"four", strings.Repeat("x", maxStderrLine) + "…"}
	if got := tail.tail(); len(got) != 3 || got[0] != "three" || got[1] != want[0] || got[2] != want[1] {
		t.Fatalf("tail %q", got)
	}
	if len(seen) != 5 || seen[1] != "two" {
		t.Fatalf("the hook saw %q", seen)
	}
}
