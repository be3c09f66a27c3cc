package main

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestABThroughputFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--throughput", "-d", "2s"}, "--throughput needs -c N, a concurrency that saturates the server"},
		{[]string{"--throughput", "-c", "4"}, "--throughput needs -d D"},
		{[]string{"--throughput", "-c", "4", "-d", "2s", "--rate", "5"}, "--throughput runs a closed loop at -c N: drop --rate"},
		{[]string{"--throughput", "-c", "4", "-d", "2s", "--rounds", "1"}, "--throughput needs --rounds 2 or more"},
	} {
		_, _, err := runAB(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ab %q: error %v, want %q", tc.args, err, tc.want)
		}
		if ee := (*exitError)(nil); !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("ab %q: error %v, want exit status 2 (unusable input)", tc.args, err)
		}
	}
}

// abCheckThroughput runs `ab --throughput` on `omnibench serve` whose stats
// cost 100 ms per request, at 4 workers on a capacity of 1 stream: stats
// on serves a fraction of what stats off does, and the report, within 100
// columns, says so before its verdict line.
func abCheckThroughput(t *testing.T, bin string) {
	server := abServeCmd(bin, "--capacity", "1", "--stats-cost", "100ms")
	out, stderr, err := runAB(t, "--log-stats", "--server-cmd", server, "--throughput", "-c", "4", "-d", "2250ms",
		"--rounds", "3", "--settle", "0")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{"Throughput: B against A", "Throughput per round", "requests_per_s (req/s)",
		"throughput: requests_per_s: B higher by ", "\nPASS"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line of %d columns: %s", n, line)
		}
	}
}
