package results

import (
	"strings"
	"testing"
)

func TestIdentify(t *testing.T) {
	for in, want := range map[string]string{
		`{"schema_version":1,"run":{"type":"header"},"interrupted":false,"summary":{},"bench":{},"load":{}}`: "a run summary document",
		`{"schema_version":1,"run":{},"summary":{},"bench":{}}`:                                              "a report document",
		`{"schema_version":1,"command":"sweep","axis":"concurrency","levels":[]}`:                            "a sweep document",
		`{"schema_version":1,"command":"capacity"}`:                                                          "a capacity document",
		"# HELP vllm:omni_audio_frames_total Frames.\n# TYPE vllm:omni_audio_frames_total counter\n":         "a Prometheus exposition",
		`{"a":1,"b":[1,2]}`:                  "a JSON document with the keys a, b",
		"plain text\n":                       "",
		`{"schema_version":1,"run":{},"summ`: "a JSON document with the keys schema_version, run",
	} {
		got := Identify(strings.NewReader(in))
		if (want == "" && got != "") || !strings.HasPrefix(got, want) {
			t.Errorf("Identify(%.40q) = %q, want prefix %q", in, got, want)
		}
	}
}
