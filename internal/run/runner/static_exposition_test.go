package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"
)

// StaticExpositionEnv, set in the environment of this test binary, makes
// it a static /metrics server instead of running tests (TestMain): the
// scrape target of BenchmarkStampDelayWithScrapes, in a process of its
// own. The file it names holds the content type on its first line and the
// exposition after it.
const StaticExpositionEnv = "OMNIBENCH_STATIC_EXPOSITION"

// serveStaticExposition is the process StaticExpositionEnv asks for:
// it serves the exposition in file on a free loopback port until it is
// interrupted, and returns the process's exit code.
func serveStaticExposition(file string) int {
	content, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	contentType, body, _ := bytes.Cut(content, []byte("\n"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(
		func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", string(contentType))
			_, _ = w.Write(body)
		})}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	// The line startChild waits for, as omnibench serve writes it.
	fmt.Fprintf(os.Stderr, "omnibench serve: listening on http://%s\n", ln.Addr())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// BusyLoopEnv, set in the environment of this test binary, makes it a
// competing job instead of running tests (TestMain): a process that keeps
// one CPU busy, started by BenchmarkStampDelayWithScrapes with
// -omnibench.busy to measure on a machine shared with another job.
const BusyLoopEnv = "OMNIBENCH_BUSY_LOOP"

// busyLoopLimit bounds a busy loop whose benchmark did not stop it.
const busyLoopLimit = 30 * time.Minute

// busyLoop spins on one CPU until it is killed or busyLoopLimit passes.
func busyLoop() int {
	end := time.Now().Add(busyLoopLimit)
	for n := 0; ; n++ {
		if n%(1<<20) == 0 && time.Now().After(end) {
			return 0
		}
	}
}
