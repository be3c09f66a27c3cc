package abtest

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/omnibench/omnibench/internal/secret"
	"github.com/omnibench/omnibench/internal/simulator"
)

// Arm is one side of the comparison. Its server is one of:
//   - a running server: URL alone;
//   - a server command: Cmd (with URL only when the command listens on a
//     fixed address instead of "{port}");
//   - the embedded simulator: Simulator.
type Arm struct {
	// Label describes the arm in reports, for example "stats on
	// (--log-stats)". Empty: the URL, the command or "embedded simulator".
	Label string
	// URL is the base URL of a running server, or with Cmd the address its
	// server will listen on. With Cmd and a "{port}" in it, URL may be empty:
	// the server gets a free loopback port.
	URL string
	// Cmd is a server command, run without a shell, PortPlaceholder replaced
	// by the server's port. abtest starts and stops it.
	Cmd []string
	// Simulator, when set, runs the embedded simulator with this
	// configuration on a free loopback port (Addr is ignored).
	Simulator *simulator.Config
	// Stats is what the arm claims about the server's stats. A claim is
	// verified from the arm's /metrics after its first round, with the
	// detection of `check --stats auto` (check.DetectStats); when an arm
	// does not show what it claims, Run gives no verdict and returns a
	// *StatsMismatchError. StatsUnclaimed is not verified.
	Stats StatsClaim
	// StatsArgs are the server arguments meant to give Stats (nil: none),
	// named in the StatsMismatchError.
	StatsArgs []string
}

// StatsClaim is what an arm says about its server's stats.
type StatsClaim int

// Stats claims.
const (
	StatsUnclaimed StatsClaim = iota
	StatsOn
	StatsOff
)

// String returns "", "on" or "off".
func (c StatsClaim) String() string {
	switch c {
	case StatsOn:
		return "on"
	case StatsOff:
		return "off"
	}
	return ""
}

// SimulatorArms returns two embedded-simulator arms that differ only in
// stats: A records metrics (--log-stats), B does not. Both keep cfg's seed,
// so the simulated timing of every request is the same in both.
func SimulatorArms(cfg simulator.Config) (a, b Arm) {
	on, off := cfg, cfg
	on.StatsEnabled, off.StatsEnabled = true, false
	return Arm{Label: "embedded simulator, stats on", Simulator: &on, Stats: StatsOn},
		Arm{Label: "embedded simulator, stats off", Simulator: &off, Stats: StatsOff}
}

// LogStatsArms returns the arms of the --log-stats experiment on one server
// command: A is serverCmd followed by onFlag, B serverCmd followed by
// offFlag (either may be empty: servers of the original metrics design are
// off without a flag, current vLLM-Omni servers are on without one; see
// docs/reference/server-versions.md, section 3). Both arms claim
// their stats, so Run verifies them.
func LogStatsArms(serverCmd, onFlag, offFlag []string) (a, b Arm) {
	join := func(extra []string) []string {
		return append(append([]string(nil), serverCmd...), extra...)
	}
	label := func(state string, flag []string) string {
		if len(flag) == 0 {
			return state + " (no flag)"
		}
		return state + " (" + JoinArgs(flag) + ")"
	}
	return Arm{Label: label("stats on", onFlag), Cmd: join(onFlag), Stats: StatsOn, StatsArgs: onFlag},
		Arm{Label: label("stats off", offFlag), Cmd: join(offFlag), Stats: StatsOff, StatsArgs: offFlag}
}

// kind names where the arm's server comes from.
func (a Arm) kind() string {
	switch {
	case a.Simulator != nil:
		return "simulator"
	case len(a.Cmd) > 0:
		return "command"
	}
	return "url"
}

// validate reports a misconfigured arm; name is "A" or "B".
func (a Arm) validate(name string) error {
	switch {
	case a.Simulator != nil && (a.URL != "" || len(a.Cmd) > 0):
		return fmt.Errorf("arm %s: the embedded simulator takes no URL or command", name)
	case a.Simulator == nil && a.URL == "" && len(a.Cmd) == 0:
		return fmt.Errorf("arm %s: no server: give a URL, a server command or the embedded simulator", name)
	case len(a.Cmd) > 0 && a.Cmd[0] == "":
		return fmt.Errorf("arm %s: server command %q has an empty program name", name, JoinArgs(RedactArgs(a.Cmd)))
	case len(a.Cmd) > 0 && a.URL == "" && !hasPlaceholder(a.Cmd):
		return fmt.Errorf("arm %s: server command %q: put %s where the port goes (or give the URL it listens on)",
			name, JoinArgs(RedactArgs(a.Cmd)), PortPlaceholder)
	}
	if a.URL != "" {
		if _, err := parseBaseURL(a.URL); err != nil {
			return fmt.Errorf("arm %s: %w", name, err)
		}
	}
	return nil
}

// label is the arm's description for reports.
func (a Arm) label() string {
	switch {
	case a.Label != "":
		return a.Label
	case a.Simulator != nil:
		return "embedded simulator"
	case len(a.Cmd) > 0:
		return JoinArgs(RedactArgs(a.Cmd))
	}
	return redactURL(a.URL)
}

// parseBaseURL checks a server base URL: http or https with a host.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", redactURL(raw), err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want http://host:port or https://host:port", redactURL(raw))
	}
	return u, nil
}

// urlPort returns the port of a base URL, the scheme's default when none.
func urlPort(raw string) (string, error) {
	u, err := parseBaseURL(raw)
	if err != nil {
		return "", err
	}
	if p := u.Port(); p != "" {
		return p, nil
	}
	if u.Scheme == "https" {
		return "443", nil
	}
	return "80", nil
}

// redactURL shows a URL as every output does (secret.URL).
func redactURL(raw string) string { return secret.URL(raw) }

// freePort asks the kernel for a free loopback TCP port. The port is free
// when this returns; another process could take it before the server binds
// it, which the server's start-up failure then reports.
func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("picking a free loopback port: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", fmt.Errorf("picking a free loopback port: closing %s: %w", addr, err)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("picking a free loopback port: %w", err)
	}
	return port, nil
}

func trimSlash(s string) string { return strings.TrimRight(s, "/") }
