package simulator

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden expositions in testdata")

// TestGoldenExposition compares the simulator's whole text /metrics, runtime
// families included, with golden files for stats on and off, in the original
// metrics design's setup (Qwen3-Omni-30B, three stages of one replica, after some traffic).
// Values that depend on the clock or the process (runtime families,
// `_created` times, and with stats on every sample) are masked as "V"; with
// stats off the pipeline samples are compared as they are (all zero). The
// line counts are the original metrics design's measure (1358 on, 124 off;
// docs/simulator.md says why the simulator differs).
func TestGoldenExposition(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: the process_* families are absent here")
	}
	for _, tc := range []struct {
		on     bool
		golden string
	}{{true, "exposition_stats_on.prom"}, {false, "exposition_stats_off.prom"}} {
		t.Run(tc.golden, func(t *testing.T) {
			cfg := testConfig()
			cfg.StatsEnabled = tc.on
			run := startSim(t, cfg)
			for range 3 {
				doChat(t, run, chatReq(prompt25, nil))
			}
			doSpeech(t, run, speechReq(input10, nil))
			got := maskExposition(scrapeText(t, run.URL, ""), tc.on)
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("exposition differs from %s (run with -update to rewrite):\n--- got\n%s", path, got)
			}
			t.Logf("stats on=%v: %d lines", tc.on, strings.Count(got, "\n"))
		})
	}
}

// maskExposition replaces the value of every sample line that depends on
// the clock or the process with "V".
func maskExposition(text string, all bool) string {
	var b strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		name, _, _ := strings.Cut(line, "{")
		name, _, _ = strings.Cut(name, " ")
		if !strings.HasPrefix(line, "#") && (all || runtimeFamily(line) || strings.HasSuffix(name, "_created")) {
			if i := strings.LastIndexByte(line, ' '); i >= 0 {
				line = line[:i] + " V"
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}
