package simulator

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

func TestConfigDefaults(t *testing.T) {
	c, err := Config{}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8000" || c.Model != DefaultModel || c.SampleRate != 24000 ||
		!slices.Equal(c.Topology, []int{1, 1, 1}) || c.Prefix != omnimetrics.PrefixDesign ||
		c.Timing != DefaultTiming() || c.Faults.StallFor != 30*time.Second || c.Faults.OversizedBytes != 300*1024 {
		t.Errorf("defaults: %+v", c)
	}
	if c.StatsEnabled {
		t.Error("stats on by default; the design document's default is off")
	}
	d := DefaultConfig()
	if d.Stamp || d.Timing.TTFA != 150*time.Millisecond || d.Timing.ChunkAudio != 320*time.Millisecond || d.Timing.RTF != 0.3 {
		t.Errorf("DefaultConfig: %+v", d)
	}
	// Partial timings keep their zeros, except the three that cannot be zero.
	c, err = Config{Timing: Timing{RTF: 0.5}}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Timing.TTFA != 0 || c.Timing.ChunkAudio != 320*time.Millisecond || c.Timing.AudioPerChar != 60*time.Millisecond ||
		c.Timing.MaxAudio != 30*time.Second {
		t.Errorf("partial timing: %+v", c.Timing)
	}
	// withDefaults copies the topology.
	topo := []int{1, 2}
	c, _ = Config{Topology: topo}.withDefaults()
	c.Topology[0] = 9
	if topo[0] != 1 {
		t.Error("config aliases the caller's topology")
	}
}

func TestConfigValidation(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.SampleRate = 100 }, "--sample-rate: 100 Hz is outside 1000..384000"},
		{func(c *Config) { c.Topology = []int{1, 0, 1} }, "--replicas: stage 1 has 0 replicas, want 1..256"},
		{func(c *Config) { c.Prefix = "foo:" }, `--metrics-prefix: "foo:" is neither "vllm:omni_" nor "vllm_omni:"`},
		{func(c *Config) { c.Capacity = -1 }, "--capacity: -1 is negative"},
		{func(c *Config) { c.Timing.TTFA = -time.Second }, "--ttfa: -1s is negative"},
		{func(c *Config) { c.Timing.Jitter = 1 }, "--jitter: 1 is outside [0, 1)"},
		{func(c *Config) { c.Timing.RTF = math.NaN() }, "--rtf: NaN is outside 0..1000"},
		{func(c *Config) { c.Timing.MinAudio = time.Minute }, "--min-audio: 1m0s exceeds --max-audio 30s"},
		{func(c *Config) { c.Timing.ChunkAudio = time.Nanosecond }, "--chunk-audio: 1ns is shorter than one sample at 24000 Hz"},
		{func(c *Config) { c.Faults.Disconnect = 1.5 }, "--fault-disconnect: probability 1.5 is outside [0, 1]"},
		{func(c *Config) { c.Timing.StallProb = -0.1 }, "--stall-prob: probability -0.1 is outside [0, 1]"},
		{func(c *Config) { c.Faults.OversizedBytes = 10 }, "--fault-oversized-bytes: 10 is outside 1024..67108864"},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		_, err := New(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to contain %q", err, tc.want)
		}
	}
}

func TestParseReplicas(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"1,2,2", []int{1, 2, 2}, ""},
		{" 3 ", []int{3}, ""},
		{"1, 2", []int{1, 2}, ""},
		{"", nil, "replica list is empty"},
		{"1,x", nil, `replica list "1,x": stage 1: "x" is not an integer`},
		{"1,0", nil, `replica list "1,0": stage 1: 0 replicas, want at least 1`},
		{"1,,2", nil, `stage 1: "" is not an integer`},
	} {
		got, err := ParseReplicas(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseReplicas(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseReplicas(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestKneeStreams(t *testing.T) {
	if k := (Config{Capacity: 100, Timing: Timing{RTF: 0.3}}).KneeStreams(); math.Abs(k-333.333333) > 1e-5 {
		t.Errorf("knee %v, want 333.33", k)
	}
	if k := (Config{Capacity: 0, Timing: Timing{RTF: 0.3}}).KneeStreams(); !math.IsInf(k, 1) {
		t.Errorf("unlimited capacity: knee %v", k)
	}
}
