package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadTraceFile(t *testing.T) {
	f, err := ReadFile(filepath.Join("testdata", "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != FormatTrace || f.Skipped != nil {
		t.Fatalf("format %q skipped %v", f.Format, f.Skipped)
	}
	var ids []string
	for _, tr := range f.Traces {
		ids = append(ids, tr.ID)
	}
	if got := strings.Join(ids, ","); got != "doc,smooth,abs-clock,stereo" {
		t.Fatalf("ids %s", got)
	}
	st := f.Traces[3]
	if st.Where != filepath.Join("testdata", "traces.jsonl")+":4" || st.Input.SampleRate != 16000 || st.Input.SampleWidth != 2 || st.Input.Channels != 2 || len(st.Input.ArrivalsS) != 2 {
		t.Fatalf("stereo trace %+v", st)
	}
	if a := f.Traces[2].Input.ArrivalsS; len(a) != 20 || a[19] != 123456.0+0.1*19 {
		t.Fatalf("abs-clock arrivals not bit-exact: %v", a)
	}
}

func TestReadTraceDefaultsAndBlankLines(t *testing.T) {
	in := "\n  \r\n" + `{"sample_rate":8000,"arrivals_s":[],"bytes":[],"extra":"kept out"}` + "\r\n\n" +
		`{"id":"x","sample_rate":8000,"arrivals_s":[1,1,2],"bytes":[0,2,4]}` // no final newline
	f, err := Read("mem", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Traces) != 2 || f.Traces[0].ID != "line 3" || f.Traces[0].Where != "mem:3" || f.Traces[1].ID != "x" || f.Traces[1].Where != "mem:5" {
		t.Fatalf("traces %+v", f.Traces)
	}
	if f.Traces[1].Input.SampleWidth != 0 || f.Traces[1].Input.Channels != 0 {
		t.Fatalf("absent width/channels must stay 0 (continuity's defaults): %+v", f.Traces[1].Input)
	}
	f, err = Read("empty", strings.NewReader(""))
	if err != nil || f.Format != FormatTrace || len(f.Traces) != 0 {
		t.Fatalf("empty file: %+v, %v", f, err)
	}
}

func TestReadTraceErrors(t *testing.T) {
	good := `{"id":"a","sample_rate":24000,"arrivals_s":[0,0.1],"bytes":[1,2]}`
	for _, c := range []struct {
		line string
		want string
	}{
		{`{"id":"a","sample_rate":24000,`, "bad JSON"},
		{`[1,2]`, "bad JSON"},
		{`{"id":"a","sample_rate":"24000","arrivals_s":[0],"bytes":[1]}`, "bad JSON"},
		{`{"id":"a","arrivals_s":[0],"bytes":[1]}`, `missing "sample_rate"`},
		{`{"id":"a","sample_rate":0,"arrivals_s":[0],"bytes":[1]}`, `"sample_rate" 0: must be positive`},
		{`{"id":"a","sample_rate":24000,"sample_width":0,"arrivals_s":[0],"bytes":[1]}`, `"sample_width" 0`},
		{`{"id":"a","sample_rate":24000,"channels":-1,"arrivals_s":[0],"bytes":[1]}`, `"channels" -1`},
		{`{"id":"a","sample_rate":24000,"bytes":[1]}`, `missing "arrivals_s"`},
		{`{"id":"a","sample_rate":24000,"arrivals_s":[0]}`, `missing "bytes"`},
		{`{"id":"a","sample_rate":24000,"arrivals_s":[0,0.1],"bytes":[100]}`, `"arrivals_s" has 2 entries but "bytes" has 1`},
		{`{"id":"a","sample_rate":24000,"arrivals_s":[-0.1,0.1],"bytes":[1,1]}`, `"arrivals_s"[0] = -0.1: negative arrival`},
		{`{"id":"a","sample_rate":24000,"arrivals_s":[0,0.2,0.1],"bytes":[1,1,1]}`, `"arrivals_s"[2] = 0.1: before the previous arrival 0.2`},
		{`{"id":"a","sample_rate":24000,"arrivals_s":[0,0.2],"bytes":[1,-1]}`, `"bytes"[1] = -1: negative byte count`},
		{`{"id":"a","sample_rate":24000,"arrivals_s":[0,0.2],"bytes":[1,1.5]}`, "bad JSON"},
	} {
		// The bad line is line 3, after a good line and a blank one.
		_, err := Read("t.jsonl", strings.NewReader(good+"\n\n"+c.line+"\n"+good+"\n"))
		if err == nil {
			t.Errorf("%s: no error", c.line)
			continue
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "t.jsonl:3: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%s: error %q, want prefix t.jsonl:3: and %q", c.line, msg, c.want)
		}
	}
}

func TestReadResultsFile(t *testing.T) {
	name := filepath.Join("testdata", "run.jsonl")
	f, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != FormatResults {
		t.Fatalf("format %q", f.Format)
	}
	want := map[string]int{SkipWarmup: 1, SkipFailed: 1, SkipNoAudio: 1}
	if fmt.Sprint(f.Skipped) != fmt.Sprint(want) {
		t.Fatalf("skipped %v, want %v", f.Skipped, want)
	}
	if len(f.Traces) != 2 || f.Traces[0].ID != "r1" || f.Traces[1].ID != "r4" {
		t.Fatalf("traces %+v", f.Traces)
	}
	r1 := f.Traces[0].Input
	if r1.SampleRate != 24000 || r1.SampleWidth != 2 || r1.Channels != 1 || fmt.Sprint(r1.ArrivalsS) != "[0.1 0.2 0.6]" || fmt.Sprint(r1.Bytes) != "[4800 4800 4800]" {
		t.Fatalf("r1 input %+v", r1)
	}

	// A results file is checked like a trace file, naming the record.
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Replace(data, []byte(`"chunk_arrivals_s": [0.2, 0.3, 0.4]`), []byte(`"chunk_arrivals_s": [0.2, 0.4, 0.3]`), 1)
	_, err = Read("run.jsonl", bytes.NewReader(bad))
	if err == nil || !strings.Contains(err.Error(), `run.jsonl: request "r4"`) || !strings.Contains(err.Error(), `"chunk_arrivals_s"[2] = 0.3: before the previous arrival`) {
		t.Fatalf("decreasing record arrivals: %v", err)
	}
	// Errors of the results reader carry the file name.
	_, err = Read("run.jsonl", strings.NewReader(string(data)+"{\"type\":\"request\",\"seq\":\"x\"}\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "run.jsonl:7: ") {
		t.Fatalf("bad record: %v", err)
	}
	// From disk, the error names the file and the line (header is line 1,
	// five records, the bad one is line 7).
	path := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(path, append(data, "{\"type\":\"request\",\"seq\":\"x\"}\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":7: ") {
		t.Fatalf("bad record on disk: %v", err)
	}
}

func TestReadFileMissing(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "nope.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "nope.jsonl") {
		t.Fatalf("err %v", err)
	}
}

// FuzzRead feeds arbitrary bytes to the reader. Whatever it accepts must
// satisfy the invariants the simulations rely on, must replay without
// panicking, and (for trace files) must read back identically after being
// written out again.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"traces.jsonl", "malformed.jsonl", "run.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"sample_rate":1,"arrivals_s":[0],"bytes":[0]}`))
	f.Add([]byte("\n\r\n{\"id\":\"\\u0000\",\"sample_rate\":8000,\"channels\":64,\"sample_width\":8,\"arrivals_s\":[1e308,1e308],\"bytes\":[9223372036854775807,1]}"))
	f.Add([]byte(`{"type":"header"}`))
	f.Add([]byte(`{"sample_rate":24000,"arrivals_s":[0,-0],"bytes":[1,1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read("fuzz", bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, tr := range file.Traces {
			in := tr.Input
			if in.SampleRate <= 0 || len(in.ArrivalsS) != len(in.Bytes) {
				t.Fatalf("accepted bad trace %+v", tr)
			}
			for i, a := range in.ArrivalsS {
				if a < 0 || math.IsNaN(a) || (i > 0 && a < in.ArrivalsS[i-1]) || in.Bytes[i] < 0 {
					t.Fatalf("accepted bad timeline %+v", tr)
				}
			}
		}
		_, _ = Run(file.Traces, Options{Thresholds: []float64{0.1, 0.5}})
		if file.Format != FormatTrace {
			return
		}
		var buf bytes.Buffer
		for _, tr := range file.Traces {
			line := map[string]any{"id": tr.ID, "sample_rate": tr.Input.SampleRate, "arrivals_s": tr.Input.ArrivalsS, "bytes": tr.Input.Bytes}
			if tr.Input.SampleWidth != 0 {
				line["sample_width"] = tr.Input.SampleWidth
			}
			if tr.Input.Channels != 0 {
				line["channels"] = tr.Input.Channels
			}
			b, err := json.Marshal(line)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
		again, err := Read("again", &buf)
		if err != nil {
			t.Fatalf("re-reading what was accepted: %v", err)
		}
		if len(again.Traces) != len(file.Traces) {
			t.Fatalf("round trip: %d traces, want %d", len(again.Traces), len(file.Traces))
		}
		for i := range again.Traces {
			a, b := again.Traces[i], file.Traces[i]
			if a.ID != b.ID || fmt.Sprint(a.Input) != fmt.Sprint(b.Input) {
				t.Fatalf("round trip changed trace %d: %+v -> %+v", i, b, a)
			}
		}
	})
}
