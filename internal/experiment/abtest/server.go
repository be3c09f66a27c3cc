package abtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/secret"
)

// Defaults of the server life cycle.
const (
	DefaultStartupTimeout = 60 * time.Second
	DefaultStopGrace      = 10 * time.Second

	// healthPoll is the interval between /health probes while a server
	// starts: short against any real start-up, long against a probe.
	healthPoll = 100 * time.Millisecond
	// healthProbeTimeout bounds one /health request, so a server that
	// accepts connections but never answers cannot stall the wait past the
	// start-up deadline by much.
	healthProbeTimeout = 2 * time.Second
	// groupPoll is the interval at which Stop checks that the rest of the
	// process group has gone after its leader exited.
	groupPoll = 20 * time.Millisecond
	// tailLines is how much of a server's log an error quotes.
	tailLines = 15
)

// server is one started server command.
type server struct {
	arm     string
	argv    []string // as run, port substituted
	url     string   // base URL
	logPath string
	log     *os.File
	cmd     *exec.Cmd
	pid     int

	done    chan struct{} // closed when Wait has returned
	waitErr error         // valid after done
}

// startServer runs argv in its own process group with its output appended
// to logPath, and waits until GET baseURL/health answers 200. On any failure
// (including ctx cancellation) the process group is stopped and reaped
// before startServer returns; the error then names the log file and quotes
// its end, and the returned server (non-nil once the process was started)
// tells its pid.
//
// The server's output reaches the log through red, so a server that prints
// its own command line or environment does not leak the credentials in it.
// On Linux the server gets SIGKILL when omnibench dies (even by SIGKILL):
// see startLocked.
func startServer(ctx context.Context, arm string, argv []string, baseURL, logPath string, timeout, grace time.Duration, red *secret.Redactor) (*server, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("arm %s: server log: %w", arm, err)
	}
	s := &server{arm: arm, argv: argv, url: baseURL, logPath: logPath, log: logf, done: make(chan struct{})}
	shown := red.String(JoinArgs(RedactArgs(argv)))
	fmt.Fprintf(logf, "# omnibench ab: arm %s: starting %s at %s\n", arm, shown, time.Now().UTC().Format(time.RFC3339Nano))

	cmd := exec.Command(argv[0], argv[1:]...)
	out := red.Writer(logf)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Stdin = nil // /dev/null: a server never reads the terminal
	// Through a redacting writer exec copies the output from a pipe; a
	// forked worker that keeps the pipe open must not hold Wait for ever
	// once the leader is gone.
	cmd.WaitDelay = grace
	setProcessGroup(cmd)
	setParentDeathSignal(cmd)
	if err := s.startLocked(cmd); err != nil {
		fmt.Fprintf(logf, "# omnibench ab: could not start: %v\n", red.String(err.Error()))
		logf.Close()
		return nil, fmt.Errorf("arm %s: starting server %s: %s", arm, shown, red.String(err.Error()))
	}
	fmt.Fprintf(logf, "# omnibench ab: pid %d (process group %d)\n", s.pid, s.pid)

	if err := s.waitHealthy(ctx, timeout); err != nil {
		s.stop(grace)
		if ctx.Err() != nil {
			return s, fmt.Errorf("arm %s: waiting for the server to start: %w", arm, ctx.Err())
		}
		return s, fmt.Errorf("arm %s: server %s %w; its output is in %s%s", arm, shown, err, logPath, s.tail())
	}
	return s, nil
}

// startLocked starts cmd from a goroutine locked to its OS thread and keeps
// that goroutine (and thread) until the process has been reaped.
//
// Why: Linux delivers the parent-death signal (Pdeathsig) when the *thread*
// that forked the child exits, not when the process does. The Go runtime may
// end a thread (a goroutine that exits while locked to one takes its thread
// with it), and cmd.Start may run on any thread; a server started on such a
// thread would be killed mid-run. A locked goroutine that lives as long as
// the child pins the forking thread for exactly that time.
func (s *server) startLocked(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		s.cmd, s.pid = cmd, cmd.Process.Pid
		started <- nil
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	return <-started
}

// waitHealthy polls /health until it answers 200, the process exits, the
// timeout passes or ctx is done.
func (s *server) waitHealthy(ctx context.Context, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(healthPoll)
	defer tick.Stop()
	// A transport of its own without keep-alive: no idle connection to a
	// server that is about to be measured (or stopped) outlives the wait.
	client := &http.Client{Timeout: healthProbeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	healthURL := s.url + "/health"
	last := errors.New("no answer yet")
	for {
		if last = probe(ctx, client, healthURL); last == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("exited before it became healthy (%s)", s.exitState())
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("did not become healthy within the start-up timeout %v (GET %s: %v)", timeout, redactURL(healthURL), last)
		case <-tick.C:
		}
	}
}

// probe sends one GET /health.
func probe(ctx context.Context, client *http.Client, healthURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, healthURL, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// answers sends one GET /health (bounded by healthProbeTimeout): nil when
// the server answers 200.
func (s *server) answers(ctx context.Context) error {
	client := &http.Client{Timeout: healthProbeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	return probe(ctx, client, s.url+"/health")
}

// exited reports whether the process has exited (unexpectedly, when the
// caller has not stopped it).
func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// exitState describes how the process ended; call after done.
func (s *server) exitState() string {
	if s.cmd.ProcessState != nil {
		return s.cmd.ProcessState.String()
	}
	if s.waitErr != nil {
		return s.waitErr.Error()
	}
	return "exited"
}

// stop ends the server: SIGTERM to its process group, SIGKILL to the group
// when the leader has not exited after grace, and the leader is always
// reaped. Group members that outlive the leader (workers a server forked)
// get the rest of the grace period, then SIGKILL. stop is idempotent.
func (s *server) stop(grace time.Duration) {
	if s.log == nil {
		return // already stopped
	}
	deadline := time.Now().Add(grace)
	if !s.exited() {
		signalGroup(s.pid, termSignal())
		t := time.NewTimer(grace)
		select {
		case <-s.done:
		case <-t.C:
			fmt.Fprintf(s.log, "# omnibench ab: no exit %v after SIGTERM: sending SIGKILL\n", grace)
			signalGroup(s.pid, killSignal())
			<-s.done
		}
		t.Stop()
	}
	for groupAlive(s.pid) && time.Now().Before(deadline) {
		time.Sleep(groupPoll) // polling the kernel: there is nothing to wait on for non-children
	}
	if groupAlive(s.pid) {
		signalGroup(s.pid, killSignal())
	}
	fmt.Fprintf(s.log, "# omnibench ab: arm %s: server %s at %s\n", s.arm, s.exitState(), time.Now().UTC().Format(time.RFC3339Nano))
	s.log.Close()
	s.log = nil
}

// tail returns the last lines of the server log, formatted for an error
// message ("" when the log is empty or unreadable).
func (s *server) tail() string {
	data, err := readTail(s.logPath, 8<<10)
	if err != nil || len(bytes.TrimSpace(data)) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return ", ending:\n    " + strings.Join(lines, "\n    ")
}

// readTail reads at most max bytes from the end of a file.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	buf := make([]byte, st.Size()-off)
	n, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	buf = buf[:n]
	if off > 0 {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:] // drop the partial first line
		}
	}
	return buf, nil
}

// PortInUseError is a fixed server port that already accepts connections
// before ab starts its server there.
type PortInUseError struct {
	URL  string // password removed
	Port string
}

func (e *PortInUseError) Error() string {
	return fmt.Sprintf("port %s (%s) already accepts connections before the server was started: "+
		"another server (perhaps one left by a killed omnibench) holds it; stop it or pick another port", e.Port, e.URL)
}

// busyPortDial bounds the connection attempt of refuseBusyPort: loopback
// answers or refuses at once; a remote host that drops packets is taken as
// free after this long.
const busyPortDial = time.Second

// refuseBusyPort returns a *PortInUseError when something already listens on
// the host and port of baseURL.
func refuseBusyPort(ctx context.Context, baseURL string) error {
	u, err := parseBaseURL(baseURL)
	if err != nil {
		return err
	}
	port, err := urlPort(baseURL)
	if err != nil {
		return err
	}
	d := net.Dialer{Timeout: busyPortDial}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil // refused or unreachable: free for the server
	}
	c.Close()
	return &PortInUseError{URL: redactURL(baseURL), Port: port}
}
