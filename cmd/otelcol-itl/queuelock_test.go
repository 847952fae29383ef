package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	berrors "go.etcd.io/bbolt/errors"
	"go.opentelemetry.io/collector/confmap"
)

// TestQueueDirInUse: a second collector started on the queue directory of one still running stops
// at start, and otelcol-itl says why: the directory, the variable that set it, that another process
// holds the queue's file, and the fix. The collector said only `failed to start "otlp_http"
// exporter: timeout` (bbolt waited a second for the file's lock), naming neither. Both shipped
// configs with a queue on disk, each run twice for real on one ITL_QUEUE_DIR.
func TestQueueDirInUse(t *testing.T) {
	for _, c := range []struct{ config, exporter string }{{"gateway.yaml", "otlp_http"}, {"agent.yaml", "otlp_grpc"}} {
		t.Run(c.config, func(t *testing.T) {
			setConfigEnv(t)
			queue := os.Getenv("ITL_QUEUE_DIR")
			env := []string{"GATEWAY_GRPC_ENDPOINT=127.0.0.1:0", "GATEWAY_HTTP_ENDPOINT=127.0.0.1:0", "OTLP_GRPC_ENDPOINT=127.0.0.1:0",
				"OTLP_HTTP_ENDPOINT=127.0.0.1:0", "HEALTH_CHECK_ENDPOINT=127.0.0.1:0", "TELEMETRY_PORT=0", "PPROF_ENDPOINT=127.0.0.1:0"}
			config := filepath.Join("..", "..", "exporter-config", c.config)
			startCollector(t, env, "--config", config)

			out, code := otelcolItl(t, env, "--config", config)
			if code != 1 || !strings.Contains(out, `failed to start "`+c.exporter+`" exporter: timeout`) {
				t.Fatalf("exit status %d, want 1 and the collector's timeout:\n%s", code, out)
			}
			for _, want := range []string{
				fmt.Sprintf("The queue directory is in use: exporter %q keeps its sending queue on disk in %q (extensions::file_storage::directory)", c.exporter, queue),
				"exporter_" + c.exporter + "__traces",
				"another process has it open, another collector given the same directory or a previous run of this one that has not exited yet",
				"Give each collector on the host its own directory, or stop the other process first",
				`extensions::file_storage::directory is "${env:ITL_QUEUE_DIR:-`,
				`ITL_QUEUE_DIR="` + queue + `"`,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the output lacks %q:\n%s", want, out)
				}
			}
			// Only the directory's variable: not the exporter's endpoint, token or queue size,
			// which the note's words must not make explain name.
			if n := strings.Count(out, "\n  "); n != 1 {
				t.Errorf("%d keys explained, want 1 (the directory):\n%s", n, out)
			}
		})
	}
}

// startCollector runs main with args in a child process of the test binary until the test ends,
// and returns once the collector says it is ready: every component started, the exporters' queue
// files open and locked.
func startCollector(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), runMain+"="+strings.Join(args, "\n")), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	lines.Buffer(nil, 1<<20)
	var seen strings.Builder
	for lines.Scan() {
		seen.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), "Everything is ready") {
			go io.Copy(io.Discard, stderr) // the rest, or the collector blocks on a full pipe
			return
		}
	}
	t.Fatalf("the first collector ended before it was ready:\n%s", seen.String())
}

// TestQueueLockHeldNarrow: the note is given for bbolt's lock timeout of an exporter whose sending
// queue is on a file_storage extension, and for nothing else that says "timeout": an exporter
// without a queue on disk, another component, an error that only reads "timeout", a context's
// deadline, a storage extension of another kind.
func TestQueueLockHeldNarrow(t *testing.T) {
	q := &queueStores{}
	conf := confmap.NewFromStringMap(map[string]any{
		"exporters": map[string]any{
			"otlp_http":        map[string]any{"sending_queue": map[string]any{"storage": "file_storage/q"}},
			"otlp_http/memory": map[string]any{"sending_queue": map[string]any{"enabled": true}},
			"otlp_grpc/other":  map[string]any{"sending_queue": map[string]any{"storage": "db_storage"}},
		},
		"extensions": map[string]any{
			"file_storage/q": map[string]any{"directory": "/srv/queue", "timeout": "3s"},
			"db_storage":     map[string]any{},
		},
	})
	if err := q.Convert(context.Background(), conf); err != nil {
		t.Fatal(err)
	}
	lockTimeout := func(part string) error {
		return fmt.Errorf("cannot start pipelines: failed to start %s: %w", part, berrors.ErrTimeout)
	}
	got := q.lockHeld(lockTimeout(`"otlp_http" exporter`))
	for _, want := range []string{`exporter "otlp_http" keeps its sending queue on disk in "/srv/queue" (extensions::file_storage/q::directory)`, "for the 3s file_storage waits"} {
		if !strings.Contains(got, want) {
			t.Errorf("the note lacks %q:\n%s", want, got)
		}
	}
	for name, err := range map[string]error{
		"an exporter without a queue on disk": lockTimeout(`"otlp_http/memory" exporter`),
		"a receiver":                          lockTimeout(`"otlp" receiver`),
		"an extension":                        fmt.Errorf("failed to start extensions: %w", berrors.ErrTimeout),
		"another error reading timeout":       errors.New(`cannot start pipelines: failed to start "otlp_http" exporter: timeout`),
		"a context's deadline":                fmt.Errorf(`failed to start "otlp_http" exporter: %w`, context.DeadlineExceeded),
		"a storage of another kind":           lockTimeout(`"otlp_grpc/other" exporter`),
	} {
		if got := q.lockHeld(err); got != "" {
			t.Errorf("%s: explained as a queue directory in use:\n%s", name, got)
		}
	}
}

// TestQueueLockHeldFiles: the note names the queue's files in a directory whose name holds a glob's
// metacharacters ([, *, ?), and those of an exporter whose name file_storage writes escaped (a ':'
// as ~003A, exporter_otlp_http_a~003Ab_traces), where filepath.Glob matched none and the note said only "its file there"; a file of
// another exporter whose name begins alike is not named.
func TestQueueLockHeldFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "queue[eu]*?")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"exporter_otlp_http_a~003Ab_traces", "exporter_otlp_http_a~003Ab_logs", "exporter_otlp_http_a~003Ab~003Ac_traces", "exporter_otlp_http__traces"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	q := &queueStores{}
	conf := confmap.NewFromStringMap(map[string]any{
		"exporters":  map[string]any{"otlp_http/a:b": map[string]any{"sending_queue": map[string]any{"storage": "file_storage"}}},
		"extensions": map[string]any{"file_storage": map[string]any{"directory": dir}},
	})
	if err := q.Convert(context.Background(), conf); err != nil {
		t.Fatal(err)
	}
	got := q.lockHeld(fmt.Errorf(`cannot start pipelines: failed to start "otlp_http/a:b" exporter: %w`, berrors.ErrTimeout))
	if want := "its file there (exporter_otlp_http_a~003Ab_logs, exporter_otlp_http_a~003Ab_traces) stayed locked"; !strings.Contains(got, want) {
		t.Errorf("the note lacks %q:\n%s", want, got)
	}
}
