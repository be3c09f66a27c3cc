package abtest

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/omnibench/omnibench/internal/simulator"
)

// helperArg makes the test binary act as a server process instead of
// running tests: `abtest.test abtest-helper MODE ...`. Tests start it as a
// server command, so process management is exercised on real processes
// without building anything.
const helperArg = "abtest-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helperMain(os.Args[2], os.Args[3:]))
	}
	// A race-enabled binary sleeps a second at exit (the race runtime's
	// atexit_sleep_ms); helper servers are this binary, and a second per
	// stop would outlast the short grace periods the tests use.
	if os.Getenv("GORACE") == "" {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	goleak.VerifyTestMain(m)
}

// helperCmd returns the argv of a helper process.
func helperCmd(mode string, args ...string) []string {
	return append([]string{os.Args[0], helperArg, mode}, args...)
}

// fastTiming makes the simulator stream a response in a few tens of
// milliseconds, so an A/B run takes about a second.
func fastTiming() simulator.Timing {
	return simulator.Timing{
		TTFT: 2 * time.Millisecond, WordInterval: time.Millisecond, TTFA: 5 * time.Millisecond,
		ChunkAudio: 40 * time.Millisecond, RTF: 0.05, Jitter: 0.1, Stall: time.Millisecond,
		AudioPerChar: 2 * time.Millisecond, MinAudio: 50 * time.Millisecond, MaxAudio: 300 * time.Millisecond,
	}
}

func fastSimulator(stats bool) simulator.Config {
	cfg := simulator.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Timing = fastTiming()
	cfg.Seed = 7
	cfg.StatsEnabled = stats
	return cfg
}

// helperMain runs one helper mode:
//
//	serve --port P --stats on|off   the simulator until SIGTERM
//	fork --port P --pidfile F [--stubborn]
//	                                like serve, after starting a sleeping child whose pid goes to F
//	                                (with --stubborn the child ignores SIGTERM)
//	ignore-term --port P            serve /health, ignore SIGTERM (only SIGKILL ends it)
//	unhealthy --port P              answer /health with 503 until SIGTERM
//	crash --port P                  answer /health; exit 1 on the first other request
//	hang --port P                   answer /health until the first other request, then
//	                                nothing at all until SIGTERM
//	exit                            write a message and exit 3 at once
//	sleep [--stubborn]              sleep for a minute or until SIGTERM (unless stubborn)
func helperMain(mode string, args []string) int {
	fs := flag.NewFlagSet(mode, flag.ContinueOnError)
	port := fs.Int("port", 0, "")
	stats := fs.String("stats", "on", "")
	pidfile := fs.String("pidfile", "", "")
	stubborn := fs.Bool("stubborn", false, "")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	addr := "127.0.0.1:" + strconv.Itoa(*port)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	switch mode {
	case "serve", "fork":
		if mode == "fork" {
			child := exec.Command(os.Args[0], helperArg, "sleep", "--stubborn="+strconv.FormatBool(*stubborn))
			if err := child.Start(); err != nil {
				fmt.Fprintln(os.Stderr, "helper: fork:", err)
				return 1
			}
			if err := os.WriteFile(*pidfile, []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "helper: pidfile:", err)
				return 1
			}
		}
		cfg := fastSimulator(*stats == "on")
		cfg.Addr = addr
		run, err := simulator.Start(ctx, cfg)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "helper: serving on %s, stats %s\n", run.URL, *stats)
		if err := run.Wait(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		fmt.Fprintln(os.Stderr, "helper: stopped")
		return 0
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		return serveHealth(context.Background(), addr, http.StatusOK)
	case "unhealthy":
		return serveHealth(ctx, addr, http.StatusServiceUnavailable)
	case "crash", "hang":
		return serveBreaking(ctx, addr, mode)
	case "exit":
		fmt.Fprintln(os.Stderr, "helper: failing on purpose: no model here")
		return 3
	case "sleep":
		if *stubborn {
			signal.Ignore(syscall.SIGTERM)
			ctx = context.Background()
		}
		t := time.NewTimer(time.Minute)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}

// serveBreaking answers /health with 200 until the first request to another
// path; then it exits at once (crash) or stops answering (hang: every
// request, /health too, waits for ctx).
func serveBreaking(ctx context.Context, addr, mode string) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	var broken atomic.Bool
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			if mode == "crash" {
				fmt.Fprintln(os.Stderr, "helper: crashing on", r.URL.Path)
				os.Exit(1)
			}
			broken.Store(true)
		}
		if broken.Load() {
			select {
			case <-ctx.Done():
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	})}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	fmt.Fprintf(os.Stderr, "helper: %s server on %s\n", mode, addr)
	err = hs.Serve(ln)
	fmt.Fprintln(os.Stderr, "helper:", err)
	return 0
}

// serveHealth answers /health with status until ctx is done.
func serveHealth(ctx context.Context, addr string, status int) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "helper: /health answers %d on %s\n", status, addr)
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) })}
	go func() {
		<-ctx.Done()
		hs.Close()
	}()
	err = hs.Serve(ln)
	fmt.Fprintln(os.Stderr, "helper:", err)
	return 0
}
