package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

func TestWriteReadRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(Header{Version: "test", Seed: 7, Target: "http://127.0.0.1:1", Mode: "closed"}); err != nil {
		t.Fatal(err)
	}
	in := []Record{
		{ID: "r0", Seq: 0, Kind: KindChat, E2ES: 1.5, ChunkArrivalsS: []float64{0.1, 0.2}, ChunkBytes: []int{4800, 4800},
			Continuity: &Continuity{Mode: "default", OK: map[string]bool{"100": true}}},
		{ID: "r1", Seq: 1, Kind: KindSpeech, ErrorClass: ErrTruncated, Error: "stream ended"},
	}
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Fatalf("want 3 lines, got %d", n)
	}
	h, recs, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if h.Seed != 7 || h.SchemaVersion != SchemaVersion || h.Type != TypeHeader {
		t.Fatalf("header = %+v", h)
	}
	if len(recs) != 2 || recs[0].ID != "r0" || recs[0].ChunkBytes[1] != 4800 || !recs[0].Continuity.OK["100"] {
		t.Fatalf("records = %+v", recs)
	}
	if recs[1].OK() || recs[1].ErrorClass != ErrTruncated {
		t.Fatalf("record 1 = %+v", recs[1])
	}
}

func TestReadErrorsNameTheLine(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", "no header"},
		{"no header", `{"type":"request","id":"a"}` + "\n", "input:1: first line must be a header"},
		{"bad json", `{"type":"header"}` + "\n" + `{"type":"request",` + "\n", "input:2: not a record: not a JSON object"},
		{"cut line not last", `{"type":"header"}` + "\n" + `{"type":"req` + "\n" + `{"type":"request","id":"a"}` + "\n", "input:2: not a record: not a JSON object"},
		{"complete bad last line", `{"type":"header"}` + "\n" + `{"type":"request","id":"a"}` + "\n" + `{"type":"req` + "\n", "input:3: not a record: not a JSON object"},
		{"cut header", `{"type":"hea`, "input:1: not a JSON object"},
		{"bad field", `{"type":"header"}` + "\n" + `{"type":"request","seq":"x"}` + "\n", "input:2: request:"},
		{"unknown type", `{"type":"header"}` + "\n" + `{"type":"other"}` + "\n", `input:2: unknown line type "other"`},
		{"future schema", `{"type":"header","schema_version":99}` + "\n", "schema_version 99"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Read(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// A run killed in the middle of a write leaves a last line without its
// newline: every complete record is kept, with one warning naming the line.
func TestReadKeepsRecordsBeforeACutLine(t *testing.T) {
	in := `{"type":"header"}` + "\n" + `{"type":"request","id":"a"}` + "\n" + `{"type":"request","id":"b"}` + "\n" + `{"type":"request","id":"c","chunk_arr`
	var warn bytes.Buffer
	_, recs, err := ReadNamedTo("run.jsonl", strings.NewReader(in), &warn)
	if err != nil {
		t.Fatalf("a cut-off last line is an error: %v", err)
	}
	if len(recs) != 2 || recs[0].ID != "a" || recs[1].ID != "b" {
		t.Fatalf("records before the cut line lost: %+v", recs)
	}
	want := "omnibench: warning: run.jsonl:4: the last line is cut off after 37 bytes"
	if !strings.HasPrefix(warn.String(), want) || strings.Count(warn.String(), "\n") != 1 {
		t.Errorf("warning %q, want one line starting %q", warn.String(), want)
	}
	// A complete last line without its newline is a record, not a cut.
	warn.Reset()
	_, recs, err = ReadNamedTo("run.jsonl", strings.NewReader(in[:strings.LastIndexByte(in, '\n')]), &warn)
	if err != nil || len(recs) != 2 || warn.Len() != 0 {
		t.Errorf("no final newline: %d records, err %v, warning %q", len(recs), err, warn.String())
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"type":"header","seed":1}` + "\n" + `{"type":"request","id":"a","chunk_bytes":[1,2]}` + "\n"))
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"type":"header"}` + "\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, recs, err := ReadNamedTo("fuzz", bytes.NewReader(data), nil)
		if err != nil {
			return
		}
		// A file that reads cleanly must survive a rewrite unchanged in meaning.
		var buf bytes.Buffer
		w := NewWriter(&buf)
		if err := w.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		_, again, err := Read(&buf)
		if err != nil {
			t.Fatalf("rewritten file does not read: %v", err)
		}
		if len(again) != len(recs) {
			t.Fatalf("rewrite changed record count: %d -> %d", len(recs), len(again))
		}
	})
}

func TestClientLineRoundTripAndAbsence(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(Header{Mode: "closed"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Record{ID: "r0", Kind: KindChat}); err != nil {
		t.Fatal(err)
	}
	noClient := buf.String() // what a run killed before its end leaves
	want := ClientHealth{Saturated: true, ClientDelayMS: 12.5, Reasons: []string{"CPU 95 % of 2 cores > 80 %"}}
	if err := w.WriteClient(want); err != nil {
		t.Fatal(err)
	}
	h, recs, err := Read(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || h.Client == nil || !h.Client.Saturated || h.Client.ClientDelayMS != 12.5 || h.Client.Reasons[0] != want.Reasons[0] {
		t.Fatalf("header client %+v, %d records", h.Client, len(recs))
	}
	if !strings.Contains(h.Client.Text(), "saturated (CPU 95 % of 2 cores > 80 %)") {
		t.Errorf("text %q", h.Client.Text())
	}
	h, recs, err = Read(strings.NewReader(noClient))
	if err != nil || len(recs) != 1 || h.Client != nil {
		t.Fatalf("without the client line: %+v, %d records, %v", h.Client, len(recs), err)
	}
	if !strings.Contains(h.Client.Text(), "unknown") {
		t.Errorf("nil text %q", h.Client.Text())
	}
}

// BenchmarkWriterRecord writes the JSONL line of a 4 s chat response's
// record (50 audio chunks, 66 send stamps, 150 text gaps): the per-record
// cost of --out, which the runner's bookkeeping goroutine pays.
func BenchmarkWriterRecord(b *testing.B) {
	r := Record{ID: "req-000001", Kind: KindChat, Endpoint: "/v1/chat/completions", Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct",
		Status: 200, E2ES: 4.05, TTFPS: 0.05, TTFTS: 0.02, AudioBytes: 192000, AudioDurationS: 4, SampleRate: 24000}
	for i := range 50 {
		r.ChunkArrivalsS = append(r.ChunkArrivalsS, 0.05+float64(i)*0.0801234)
		r.ChunkBytes = append(r.ChunkBytes, 3840)
	}
	for i := range 66 {
		r.StampDelaysS = append(r.StampDelaysS, 0.000123456+float64(i)*1e-6)
	}
	for i := range 150 {
		r.TextGapsS = append(r.TextGapsS, 0.0201234+float64(i)*1e-6)
	}
	var line bytes.Buffer
	if err := NewWriter(&line).Write(&r); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(line.Len()))
	w := NewWriter(io.Discard)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(&r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestClientLineCause: the line keeps the verdict's cause and warning, and
// the warning is what Text says; a line written before them (no cause)
// reads as it did.
func TestClientLineCause(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(Header{Mode: "closed"}); err != nil {
		t.Fatal(err)
	}
	warning := "the host is busy: other processes used 1.8 of 2 cores (CPU pressure 92 %), the load generator 1 % of its 2 cores; latencies include up to 40.0 ms of delay that is not the server's; measure on a quieter machine or stop the other work"
	if err := w.WriteClient(ClientHealth{Cause: "host_busy", Warning: warning, ClientDelayMS: 40, Reasons: []string{"send-stamp delay p99 40.0 ms > 5 ms"}}); err != nil {
		t.Fatal(err)
	}
	h, _, err := Read(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if c := h.Client; c == nil || c.Saturated || c.Cause != "host_busy" || c.Warning != warning || c.Text() != warning {
		t.Fatalf("header client %+v", h.Client)
	}
	old := `{"type":"header","mode":"closed"}` + "\n" + `{"type":"client","saturated":false,"client_delay_ms":0.5}` + "\n"
	h, _, err = Read(strings.NewReader(old))
	if err != nil || h.Client == nil || h.Client.Cause != "" || h.Client.Text() != "load generator not saturated" {
		t.Fatalf("an older file: %+v (%v)", h.Client, err)
	}
}

// TestASRLine: a transcription score written after its request's line
// reads back into that record; a score naming no record is ignored.
func TestASRLine(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	if err := w.WriteHeader(Header{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"req-000000", "req-000001"} {
		if err := w.Write(&Record{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	score := ASRScore{WER: 0.25, CER: 0.1, RefWords: 4, Hypothesis: "a b c", Reference: "a b c d", AudioS: 1.5}
	if err := w.WriteASR("req-000000", score); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteASR("req-999999", score); err != nil {
		t.Fatal(err)
	}
	_, recs, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].ASR == nil || *recs[0].ASR != score || recs[1].ASR != nil {
		t.Errorf("records %+v", recs)
	}
}

// Scrape lines read into Header.Scrapes, in the order written, between and
// after the records, which read as before.
func TestReadKeepsScrapeLines(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	steps := []error{
		w.WriteHeader(Header{Scenario: "s"}),
		w.WriteScrape(Scrape{Phase: ScrapeFirst, At: at, Series: json.RawMessage(`{"families":[]}`)}),
		w.Write(&Record{ID: "req-000000"}),
		w.WriteScrape(Scrape{Phase: ScrapeInterval, At: at.Add(time.Second), Gap: "timed out"}),
		w.WriteClient(ClientHealth{Cause: "none"}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	h, recs, err := ReadNamedTo("run.jsonl", &buf, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || h.Client == nil || len(h.Scrapes) != 2 {
		t.Fatalf("records %d, client %v, scrapes %+v", len(recs), h.Client, h.Scrapes)
	}
	if s := h.Scrapes[0]; s.Phase != ScrapeFirst || !s.At.Equal(at) || string(s.Series) != `{"families":[]}` {
		t.Errorf("first scrape %+v", s)
	}
	if s := h.Scrapes[1]; s.Phase != ScrapeInterval || s.Gap != "timed out" || s.Series != nil {
		t.Errorf("interval scrape %+v", s)
	}
}

// A scrape line whose series are written as they are is the line
// encoding/json writes, byte for byte, whatever members it has; series
// over several lines are compacted, so that the line stays one line.
func TestWriteScrapeAsEncodingJSON(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	from := at.Add(-time.Minute)
	series := json.RawMessage(`{"families":[{"name":"a\u003cb\"at\":\"","series":[{"value":1.5}]}]}`)
	for _, sc := range []Scrape{
		{Phase: ScrapeFirst, At: at, Series: series},
		{Phase: ScrapeLast, At: at, Series: series, MeasuredFrom: &from},
		{Phase: `"at":"x`, At: at, Series: series, Gap: "both"},
		{Phase: ScrapeInterval, At: at, Gap: "timed out"},
		{Phase: ScrapeInterval, At: at, Series: json.RawMessage("{\n  \"families\": []\n}")},
	} {
		var got bytes.Buffer
		if err := NewWriter(&got).WriteScrape(sc); err != nil {
			t.Fatal(err)
		}
		sc.Type = TypeScrape
		want, err := json.Marshal(&sc)
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("WriteScrape wrote\n%s\nwant\n%s", got.Bytes(), want)
		}
	}
}

// BenchmarkWriteScrape is the write of one scrape line of about 4 MB of
// series, as an interval scrape of a large server writes it.
func BenchmarkWriteScrape(b *testing.B) {
	var series bytes.Buffer
	series.WriteString(`{"families":[{"name":"vllm:e2e_request_latency_seconds","type":"histogram","series":[`)
	for i := range 20_000 {
		if i > 0 {
			series.WriteByte(',')
		}
		fmt.Fprintf(&series, `{"labels":{"stage":"%d","replica":"%d"},"buckets":[1,2,3,4,5,6,7,8,9,10],"sum":%d.5,"count":10}`, i%16, i%32, i)
	}
	series.WriteString(`]}]}`)
	w := NewWriter(io.Discard)
	sc := Scrape{Phase: ScrapeInterval, At: time.Now(), Series: series.Bytes()}
	b.SetBytes(int64(series.Len()))
	for b.Loop() {
		if err := w.WriteScrape(sc); err != nil {
			b.Fatal(err)
		}
	}
}
