package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	berrors "go.etcd.io/bbolt/errors"
	"go.opentelemetry.io/collector/confmap"
)

// queueStores remembers, from the resolved configuration, which exporters keep their sending
// queue on disk and where, so that a start error about a queue's file can name the directory.
//
// Two collectors started on one queue directory (ITL_QUEUE_DIR) clash on the queue's file, which
// the file_storage extension opens with bbolt and locks: the second waits the extension's timeout
// (1s by default) for the lock and stops with only `failed to start "otlp_http" exporter: timeout`,
// naming neither the directory nor the variable that set it. lockHeld says what that timeout is.
type queueStores struct {
	mu        sync.Mutex
	exporters map[string]string      // exporter id -> the storage extension id of its sending queue
	stores    map[string]storageSite // file_storage extension id -> where it keeps its files
}

// storageSite is a file_storage extension's directory and how long it waits for a file's lock.
type storageSite struct {
	dir     string
	timeout time.Duration
}

// converter returns a converter that notes the exporters' queues and the file_storage
// extensions of every configuration resolved; it changes nothing and refuses nothing.
func (q *queueStores) converter() confmap.ConverterFactory {
	return confmap.NewConverterFactory(func(confmap.ConverterSettings) confmap.Converter { return q })
}

func (q *queueStores) Convert(_ context.Context, conf *confmap.Conf) error {
	exporters := map[string]string{}
	for id, settings := range asMap(conf.Get("exporters")) {
		if storage, ok := asMap(asMap(settings)["sending_queue"])["storage"].(string); ok && storage != "" {
			exporters[id] = storage
		}
	}
	def := filestorage.NewFactory().CreateDefaultConfig().(*filestorage.Config)
	stores := map[string]storageSite{}
	for id, settings := range asMap(conf.Get("extensions")) {
		if typ, _, _ := strings.Cut(id, "/"); typ != "file_storage" {
			continue
		}
		site := storageSite{dir: def.Directory, timeout: def.Timeout}
		s := asMap(settings)
		if dir, ok := s["directory"].(string); ok && strings.TrimSpace(dir) != "" {
			site.dir = dir
		}
		switch t := s["timeout"].(type) {
		case string:
			if d, err := time.ParseDuration(t); err == nil {
				site.timeout = d
			}
		case time.Duration:
			site.timeout = t
		}
		stores[id] = site
	}
	q.mu.Lock()
	q.exporters, q.stores = exporters, stores
	q.mu.Unlock()
	return nil
}

// lockHeld explains err when it is an exporter whose sending queue is on a file_storage extension
// failing to start because bbolt waited out its timeout for the lock on the queue's file: another
// process has the file open. It returns "" for any other error, a timeout of an exporter without a
// queue on disk among them. The note names the directory by its key,
// extensions::<id>::directory, so that explain finds the variable that set it.
func (q *queueStores) lockHeld(err error) string {
	if !errors.Is(err, berrors.ErrTimeout) {
		return ""
	}
	text := err.Error()
	q.mu.Lock()
	defer q.mu.Unlock()
	var notes []string
	seen := map[string]bool{}
	for _, part := range failing(text) {
		if len(part) != 2 || part[0] != "exporters" || seen[part[1]] {
			continue
		}
		id := part[1]
		seen[id] = true
		ext, ok := q.exporters[id]
		if !ok {
			continue
		}
		site, ok := q.stores[ext]
		if !ok {
			continue // a storage extension of another kind: its files are not ours to name
		}
		files := queueFileNames(site.dir, id)
		file := "its file there"
		if len(files) > 0 {
			file += " (" + strings.Join(files, ", ") + ")"
		}
		notes = append(notes, fmt.Sprintf("The queue directory is in use: exporter %q keeps its sending queue on disk in %q "+
			"(extensions::%s::directory), and %s stayed locked for the %s file_storage waits (its timeout): another process has it open, "+
			"another collector given the same directory or a previous run of this one that has not exited yet.\n"+
			"Give each collector on the host its own directory, or stop the other process first (fuser or lsof on the file names it).",
			id, site.dir, ext, file, site.timeout))
	}
	return strings.Join(notes, "\n")
}

// queueSignals are the signals an exporter's sending queue is kept for, each in a file of its own.
var queueSignals = []string{"traces", "metrics", "logs", "profiles"}

// queueFileNames returns the names of the files in dir that file_storage keeps exporter id's
// sending queue in, sorted: exporter_TYPE_NAME_SIGNAL (exporter_otlp_http__traces), escaped as
// file_storage escapes a file's name (storageName). The directory is read, not globbed: a
// directory whose name holds [, * or ? matched nothing, and neither did an exporter whose name
// file_storage escapes (otlp_http/a:b, exporter_otlp_http_a~003Ab_traces).
func queueFileNames(dir, id string) []string {
	typ, name, _ := strings.Cut(id, "/")
	prefix := storageName("exporter_" + typ + "_" + name + "_")
	entries, _ := os.ReadDir(dir) // sorted by name
	var names []string
	for _, e := range entries {
		if signal, ok := strings.CutPrefix(e.Name(), prefix); ok && slices.Contains(queueSignals, signal) {
			names = append(names, e.Name())
		}
	}
	return names
}

// storageName escapes name as file_storage (v0.165) does a component's file name: every character
// but ASCII letters, digits, '.', '-' and '_' written as ~ and its code point in four or more hex
// digits (a ':' as ~003A, a '~' as ~007E).
func storageName(name string) string {
	var b strings.Builder
	for _, c := range name {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '-', c == '_':
			b.WriteRune(c)
		default:
			fmt.Fprintf(&b, "~%04X", c)
		}
	}
	return b.String()
}
