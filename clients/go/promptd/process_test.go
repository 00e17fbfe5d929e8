package promptd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
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
