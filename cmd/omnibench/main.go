// Command omnibench benchmarks streaming speech and omni model servers
// (vLLM-Omni and other OpenAI-compatible servers), checks their Prometheus
// metrics, and ships a simulated server so every run works without a GPU.
//
// This package is wiring only: flags in, package calls out.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is overridden at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd(versionString())
	err := root.ExecuteContext(ctx)
	return exitCode(ctx, err)
}

// exitCode maps the outcome of a command to the process status: 0 success,
// 130 when interrupted by a signal, the code an exitError carries, 1 otherwise.
func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "omnibench:", ee.err)
		}
		return ee.code
	case ctx.Err() != nil:
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(os.Stderr, "omnibench:", err)
		}
		return 130
	case err != nil:
		fmt.Fprintln(os.Stderr, "omnibench:", err)
		return 1
	}
	return 0
}

// exitError carries a specific exit status out of a command (for example 2 for
// unusable input to check, or the SLO-miss status of run).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withExitCode wraps err so that the process exits with code.
func withExitCode(code int, err error) error { return &exitError{code: code, err: err} }
