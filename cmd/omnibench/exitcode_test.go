package main

// The exit-status contract of README.md ("Exit status"), command by command:
// 0 ok, 1 failure, nothing measured, a server that cannot be reached or a
// refused verdict, 2 unusable input, 3 SLO or gate missed, 130 interrupted
// (TestRunCmdSignal sends the signal). Every case
// runs the real command in process; none needs more than a few requests.

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// execContract runs `omnibench args...` and returns the status main would exit
// with and everything the command said (stderr and the returned error).
func execContract(t *testing.T, args ...string) (code int, said string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := newRootCmd("test")
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(""))
	err := root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		t.Fatalf("%q did not finish within a minute", args)
	}
	code = 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		errb.WriteString(err.Error())
	}
	return code, errb.String()
}

func TestExitStatusContract(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	garbage := write("garbage.jsonl", "this is not a results file\n")
	badScenario := write("bad.yaml", "name: x\nkind: chat\nload:\n  requests: 4.5\n")
	badSLOScenario := write("slo.yaml", "name: x\nkind: chat\nslos: [audio_ttfp_p95<500]\n")
	snapshot := write("snap.prom", "# TYPE x counter\nx 1\n")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	sim := startRunSim(t, runSimConfig(t))
	levels := []string{"--url", sim, "--warmup", "0", "--settle", "0", "--scrape", "off"} // sweep, capacity
	fast := append([]string{"-c", "1"}, levels...)
	// Thresholds every run passes: the load generator counts as saturated.
	saturating := []string{"--client-cpu-threshold", "1e-12", "--client-delay-threshold", "1ns"}
	saturated := filepath.Join(dir, "saturated.jsonl")
	h, recs, err := results.ReadFile(cmpSame)
	if err != nil {
		t.Fatal(err)
	}
	h.Client = &results.ClientHealth{Saturated: true, ClientDelayMS: 40, Reasons: []string{"CPU 97 % of 2 cores"}}
	writeResults(t, saturated, h, recs)
	badLine := write("badline.jsonl", `{"type":"header","schema_version":1,"mode":"closed"}`+"\n"+`{"type":"request","id":"a","e2e_s":1}`+"\n"+"not json\n")

	for _, tc := range []struct {
		name string
		args []string
		want int
		says string // part of what the command must say
	}{
		// 2: unusable input, in every command.
		{"unknown command", []string{"bogus"}, 2, `unknown command "bogus"`},
		{"unknown flag", []string{"--bogus"}, 2, "unknown flag"},
		{"run: URL without scheme", []string{"run", "--url", "127.0.0.1:8000"}, 2, "--url"},
		{"run: bad flag value", []string{"run", "-c", "x"}, 2, "--concurrency"},
		{"run: percentile 0", []string{"run", "--percentiles", "0"}, 2, "outside (0, 100]"},
		{"run: percentile 101", []string{"run", "--percentiles", "50,101"}, 2, "outside (0, 100]"},
		{"run: bad scenario", []string{"run", "--scenario", badScenario}, 2, "load.requests: must be a whole number"},
		{"run: scenario SLO", []string{"run", "--scenario", badSLOScenario}, 2, "slos[0]"},
		{"run: argument", []string{"run", "extra"}, 2, "extra"},
		{"report: not a results file", []string{"report", garbage}, 2, "garbage.jsonl:1"},
		{"report: a bad line", []string{"report", badLine}, 2, "badline.jsonl:3: not a record: not a JSON object"},
		{"report: percentile", []string{"report", "--percentiles", "150", garbage}, 2, "outside (0, 100]"},
		{"serve: bad address", []string{"serve", "--addr", "nope"}, 2, "--addr"},
		{"serve: argument", []string{"serve", "extra"}, 2, "extra"},
		{"scrape: URL without scheme", []string{"scrape", "127.0.0.1:1"}, 2, "127.0.0.1:1"},
		{"diff: missing file", []string{"diff", filepath.Join(dir, "none.prom"), snapshot}, 2, "none.prom"},
		{"check: unknown profile", []string{"check", "--profile", "nosuch", snapshot}, 2, "nosuch"},
		{"compare: not results files", []string{"compare", garbage, garbage}, 2, "garbage.jsonl"},
		{"compare: percentile", []string{"compare", "--percentiles", "0", garbage, garbage}, 2, "outside (0, 100]"},
		{"ab: rounds", []string{"ab", "--rounds", "0"}, 2, "--rounds"},
		{"sweep: bad level", []string{"sweep", "--concurrency", "x"}, 2, "concurrency"},
		{"capacity: no SLO", []string{"capacity"}, 2, "--slo"},
		{"replay: not a trace", []string{"replay", garbage}, 2, "garbage.jsonl"},
		{"scenarios: bad file", []string{"scenarios", badScenario}, 2, "bad.yaml:4: load.requests"},
		{"scenarios: bad SLO", []string{"scenarios", badSLOScenario}, 2, "give a unit"},
		{"scenarios: unknown name", []string{"scenarios", "nosuch"}, 2, "nosuch"},
		{"scenarios: two arguments", []string{"scenarios", "a", "b"}, 2, "at most 1"},

		// 0, 1 and 3 where they are cheap.
		{"scenarios: ok", []string{"scenarios"}, 0, ""},
		{"run: ok", append([]string{"run", "-n", "2"}, fast...), 0, ""},
		{"run: nothing measured", []string{"run", "--url", refused, "--no-probe", "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "off"}, 1, "nothing was measured"},
		{"run: server unreachable", []string{"run", "--url", refused, "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "off"}, 1, "connection refused"},
		{"run: SLO missed", append([]string{"run", "-n", "2", "--slo", "completed>=3"}, fast...), 3, "completed>=3"},
		{"check: rules fail", []string{"check", snapshot}, 1, ""},

		// 1: a server that cannot be reached, in every command.
		{"scrape: server unreachable", []string{"scrape", refused + "/metrics"}, 1, "connection refused"},
		{"diff: server unreachable", []string{"diff", snapshot, refused + "/metrics"}, 1, "connection refused"},
		{"check: server unreachable", []string{"check", refused + "/metrics"}, 1, "connection refused"},

		// 1: a refused verdict, with its reason, in every command.
		{"compare: saturated run under gates", []string{"compare", cmpBase, saturated, "--fail-on-regression", "ttfp:5"}, 1, "no gate verdict"},
		{"capacity: unknown", append(append([]string{"capacity", "-n", "2", "--slo", "audio_ttfp_p95<1us", "--max-runs", "2"}, levels...), saturating...),
			1, "capacity: unknown"},

		// 3: a missed SLO or gate, in every command.
		{"sweep: SLO missed", append([]string{"sweep", "-c", "1", "-n", "2", "--slo", "audio_ttfp_p95<1us"}, levels...), 3, "1 of 1 levels missed an SLO"},
		{"compare: regression", []string{"compare", cmpBase, cmpSlower, "--fail-on-regression", "ttfp:5"}, 3, "ttfp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, said := execContract(t, tc.args...)
			if code != tc.want || !strings.Contains(said, tc.says) {
				t.Errorf("omnibench %q: exit %d, want %d (saying %q); it said:\n%s", tc.args, code, tc.want, tc.says, said)
			}
		})
	}
}
