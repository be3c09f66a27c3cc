package runner

import (
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/selfmon"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		in, base, note, err string
	}{
		{"", "", "", ""},
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000", "", ""},
		{"http://127.0.0.1:8000/", "http://127.0.0.1:8000", "", ""},
		{"https://gw.example/omni/", "https://gw.example/omni", "", ""},
		{"http://127.0.0.1:8000/v1", "http://127.0.0.1:8000", "ends in /v1: using http://127.0.0.1:8000", ""},
		{"http://u:pw@127.0.0.1:8000/v1/", "http://u:pw@127.0.0.1:8000", "using http://127.0.0.1:8000 (", ""},
		{"127.0.0.1:8000", "", "", `--url "127.0.0.1:8000": want an http:// or https:// URL, e.g. http://127.0.0.1:8000`},
		{"localhost:8000", "", "", "want an http:// or https:// URL, e.g. http://localhost:8000"},
		{"u:secret@h:8000", "", "", `--url "h:8000": want an http:// or https:// URL, e.g. http://h:8000`},
		{"ftp://h/", "", "", "want an http:// or https:// URL"},
		{"http://", "", "", "no host"},
		{"http://h:1/?a=b", "", "", "no query or fragment"},
		{"http://u:secret@h:1/?a=b", "", "", `"http://h:1/?a=xxxxx"`},
	} {
		base, note, err := ParseTarget(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "secret") {
				t.Errorf("ParseTarget(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || base != tc.base || (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) || strings.Contains(note, "pw") {
			t.Errorf("ParseTarget(%q) = %q, %q, %v; want %q with a note containing %q", tc.in, base, note, err, tc.base, tc.note)
		}
	}
}

// TestServerPlace: a loopback host is on this machine, the embedded or
// in-process simulator shares the process, anything else is not known to
// be on this machine.
func TestServerPlace(t *testing.T) {
	for _, tc := range []struct {
		base      string
		inProcess bool
		want      selfmon.Server
	}{
		{"http://127.0.0.1:8000", false, selfmon.ServerLoopback},
		{"http://127.8.9.10:8000", false, selfmon.ServerLoopback},
		{"http://[::1]:8000", false, selfmon.ServerLoopback},
		{"https://LocalHost", false, selfmon.ServerLoopback},
		{"http://127.0.0.1:8000", true, selfmon.ServerEmbedded},
		{"http://10.0.0.5:8000", false, selfmon.ServerRemote},
		{"http://gpu-box.internal:8000", false, selfmon.ServerRemote},
		{"http://user:pw@localhost.example:8000", false, selfmon.ServerRemote},
	} {
		if got := serverPlace(tc.base, tc.inProcess); got != tc.want {
			t.Errorf("serverPlace(%q, %v) = %s, want %s", tc.base, tc.inProcess, got, tc.want)
		}
	}
}
