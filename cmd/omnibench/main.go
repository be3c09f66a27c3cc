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
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/load"
)

// version is overridden at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	ctx, stop := interruptible(context.Background(), os.Stderr)
	defer stop()
	root := newRootCmd(versionString())
	cmd, err := root.ExecuteContextC(ctx)
	stderr := io.Writer(os.Stderr)
	if cmd != nil {
		stderr = commandRedactor(cmd.Flags()).Writer(stderr) // the final error may quote a server
	}
	return exitCodeTo(ctx, stderr, err)
}

// interruptible returns a context cancelled by the first SIGINT or SIGTERM
// and carrying (load.WithAbort) a channel closed by the second: the first
// lets in-flight requests finish within --grace, the second cancels them at
// once. After the second, the signals get their default action back, so a
// third ends the process whatever it is doing (the results file is valid up
// to its last complete line). stop releases the signal handler.
func interruptible(parent context.Context, stderr io.Writer) (ctx context.Context, stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(parent)
	abort := make(chan struct{})
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case <-sigs:
			fmt.Fprintln(stderr, "omnibench: interrupted again: cancelling in-flight requests now")
			close(abort)
			signal.Reset(os.Interrupt, syscall.SIGTERM)
		case <-done:
		}
	}()
	return load.WithAbort(ctx, abort), func() {
		signal.Stop(sigs)
		close(done)
		<-exited
		cancel()
	}
}

// The process statuses, one table for every command (README.md, "Exit
// status"). A command says which outcome it had by wrapping its error with
// failure, refused, unusable or missed; an error it does not wrap is a
// failure.
const (
	exitOK          = 0
	exitFailure     = 1               // the run failed, nothing was measured, a server could not be reached
	exitRefused     = 1               // no verdict could be given (ab, compare, capacity): a failure, with its reason
	exitUnusable    = 2               // bad flags, arguments, scenario, rule, results or snapshot files
	exitMissed      = slo.ExitSLOMiss // an SLO, gate or regression check was missed (3)
	exitInterrupted = 130             // Ctrl-C or SIGTERM
)

// exitCode maps the outcome of a command to the process status (see
// exitCodeTo), printing the error to stderr.
func exitCode(ctx context.Context, err error) int { return exitCodeTo(ctx, os.Stderr, err) }

// exitCodeTo maps the outcome of a command to the process status: 0 success,
// 130 when interrupted by a signal, the code an exitError carries, 1
// otherwise. The error is printed to stderr.
func exitCodeTo(ctx context.Context, stderr io.Writer, err error) int {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintln(stderr, "omnibench:", ee.err)
		}
		return ee.code
	case ctx.Err() != nil:
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintln(stderr, "omnibench:", err)
		}
		return exitInterrupted
	case err != nil:
		fmt.Fprintln(stderr, "omnibench:", err)
		return exitFailure
	}
	return exitOK
}

// exitError carries a specific exit status out of a command (for example 2 for
// unusable input to check, or the SLO-miss status of run).
type exitError struct {
	code int
	err  error
	// noVerdict marks a refusal (refused): the verdict line says NO
	// VERDICT and reason, not FAIL.
	noVerdict bool
	reason    string
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

// keepExitCode wraps err with code unless it already carries a status: the
// innermost decision stands (a server that could not be reached, found
// while reading an argument, stays a failure rather than unusable input).
func keepExitCode(code int, err error) error {
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		return err
	}
	return withExitCode(code, err)
}

// unusable marks err as unusable input (exit 2), unless it carries a status.
func unusable(err error) error { return keepExitCode(exitUnusable, err) }

// failure marks err as a failure (exit 1): a server that could not be
// reached or did not answer, a run that could not be made.
func failure(err error) error { return keepExitCode(exitFailure, err) }

// refused marks err as a refused verdict (exit 1): the command ran, and
// says why it cannot give an answer. The verdict line says the reason: the
// error err wraps ("ab: no verdict: REASON"), or err itself.
func refused(err error) error {
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		return err
	}
	reason := err
	if inner := errors.Unwrap(err); inner != nil {
		reason = inner
	}
	return &exitError{code: exitRefused, err: err, noVerdict: true, reason: reason.Error()}
}

// missed marks err as a missed SLO, gate or regression check (exit 3).
func missed(err error) error { return keepExitCode(exitMissed, err) }
