package merge

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/scrape"
)

const startAt = "2026-12-01T10:00:00Z"

// testShards builds n shards of a test of total measured requests with
// warmup warm-ups each, numbered as run --shard numbers them.
func testShards(n, total, warmup int) []Shard {
	out := make([]Shard, n)
	for i := range n {
		h := results.Header{
			SchemaVersion: 1, StartedAt: "2026-12-01T09:59:5" + string(rune('0'+i)) + "Z", Target: "http://svc:8000",
			Scenario: "tts-short", Seed: 7, Mode: "open", Rate: 10, Arrival: "poisson", Warmup: warmup,
			ShardIndex: i, ShardCount: n, StartAt: startAt, StartLateS: 0.001 * float64(i+1),
			Flags: map[string]string{"rate": "10", "requests": "12", "shard": "auto/3", "out": "/results/shard-" + string(rune('0'+i)) + ".jsonl"},
		}
		s := Shard{Path: "shard-" + string(rune('0'+i)) + ".jsonl", Header: h}
		for w := range warmup {
			s.Records = append(s.Records, results.Record{ID: fmt.Sprintf("req-%06d", w), Seq: w, Warmup: true, E2ES: 0.1})
		}
		for k := i; k < total; k += n {
			s.Records = append(s.Records, results.Record{
				ID: fmt.Sprintf("req-%06d", warmup+k), Seq: warmup + k, IntendedS: 0.1 * float64(k), SentS: 0.1*float64(k) + 0.001,
				LagS: 0.001, E2ES: 0.5 + 0.01*float64(k%5), TTFPS: 0.05 + 0.001*float64(k), AudioBytes: 100,
				LatencyOrigin: results.OriginIntended, // an open loop's, as the runner writes it
			})
		}
		out[i] = s
	}
	return out
}

func TestMergeJoinsEveryRecordOnce(t *testing.T) {
	shards := testShards(3, 12, 2)
	res, err := Merge(shards, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	ids := map[string]bool{}
	for _, r := range res.Records {
		if ids[r.ID] {
			t.Errorf("id %s twice", r.ID)
		}
		ids[r.ID] = true
		if !r.Warmup {
			seqs = append(seqs, r.Seq)
		}
	}
	slices.Sort(seqs)
	want := make([]int, 12)
	for k := range want {
		want[k] = 2 + k
	}
	if !slices.Equal(seqs, want) {
		t.Errorf("merged seqs %v, want %v", seqs, want)
	}
	m := res.Header.Merged
	if m == nil || len(m.Shards) != 3 || m.Warmup != 6 || m.Shards[1].Records != 4 {
		t.Fatalf("merged info %+v", m)
	}
	// Lateness 1, 2 and 3 ms: the skew is 3 - 1 = 2 ms.
	if math.Abs(m.StartSkewS-0.002) > 1e-12 {
		t.Errorf("start skew %v, want 0.002", m.StartSkewS)
	}
	h := res.Header
	if h.ShardCount != 0 || h.StartAt != startAt || h.StartedAt != "2026-12-01T09:59:50Z" || h.Flags["shard"] != "" || h.Flags["out"] != "" || h.Flags["rate"] != "10" {
		t.Errorf("merged header %+v", h)
	}
	// Shard by shard, in file order: the concatenation of the files.
	var concat []results.Record
	for _, s := range shards {
		for _, r := range s.Records {
			if r.Warmup {
				r.ID = fmt.Sprintf("shard%d-%s", s.Header.ShardIndex, r.ID)
			}
			concat = append(concat, r)
		}
	}
	if !reflect.DeepEqual(res.Records, concat) {
		t.Errorf("merged records are not the concatenation of the shards'")
	}
	// The summary is that of the concatenated measured records: the
	// merge approximates nothing.
	opts := summary.Options{} // the records carry their latency origin
	got, err := json.Marshal(summary.Compute(res.Records, opts))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := json.Marshal(summary.Compute(concat, opts))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(ref) {
		t.Errorf("merged summary\n%s\nconcatenated\n%s", got, ref)
	}
	// SLOs evaluate on the merge as on the concatenation; the p99 is the
	// records' own (62 ms here), never above their maximum.
	slos, err := slo.ParseAll([]string{"audio_ttfp_p99<61ms", "audio_ttfp_p50<60ms"})
	if err != nil {
		t.Fatal(err)
	}
	mergedSum, concatSum := summary.Compute(res.Records, opts), summary.Compute(concat, opts)
	gotV, err := json.Marshal(slo.Evaluate(slos, mergedSum, res.Records))
	if err != nil {
		t.Fatal(err)
	}
	refV, err := json.Marshal(slo.Evaluate(slos, concatSum, concat))
	if err != nil {
		t.Fatal(err)
	}
	if string(gotV) != string(refV) {
		t.Errorf("SLO verdicts on the merge\n%s\non the concatenation\n%s", gotV, refV)
	}
	verdicts := slo.Evaluate(slos, mergedSum, res.Records)
	if len(verdicts) != 2 || verdicts[0].Pass || !verdicts[1].Pass {
		t.Errorf("verdicts %s: want p99 missed (61.89 ms), p50 met (56.5 ms)", gotV)
	}
}

func TestMergeRefusesWhatIsNotOneTest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func([]Shard) []Shard
		mention []string
	}{
		{"seed", func(s []Shard) []Shard { s[2].Header.Seed = 8; return s }, []string{"shard-2.jsonl: seed 8", "shard-0.jsonl (shard 0) has 7"}},
		{"flag", func(s []Shard) []Shard { s[1].Header.Flags["requests"] = "13"; return s }, []string{"shard-1.jsonl: flag --requests \"13\""}},
		{"start", func(s []Shard) []Shard { s[1].Header.StartAt = "2026-12-01T10:00:01Z"; return s }, []string{"start_at"}},
		{"count", func(s []Shard) []Shard { s[1].Header.ShardCount = 4; return s }, []string{"shard_count 4"}},
		{"missing", func(s []Shard) []Shard { return s[:2] }, []string{"shard 2 of 3 missing"}},
		{"not a shard", func(s []Shard) []Shard { s[0].Header.ShardCount = 0; return s }, []string{"shard-0.jsonl: not a shard"}},
		{"no start", func(s []Shard) []Shard {
			for i := range s {
				s[i].Header.StartAt = ""
			}
			return s
		}, []string{"no start_at"}},
		{"foreign record", func(s []Shard) []Shard { s[0].Records[3].Seq = 3; return s }, []string{"seq 3) is not in shard 0/3"}},
		{"twice", func(s []Shard) []Shard { r := s[1]; r.Path = "retry-1.jsonl"; return append(s, r) }, []string{"shard 1: 2 files (shard-1.jsonl, retry-1.jsonl)", "--prefer newest"}},
	} {
		_, err := Merge(tc.edit(testShards(3, 12, 1)), Options{})
		if !IsInput(err) {
			t.Errorf("%s: error %v, want an input error", tc.name, err)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, m)
			}
		}
	}
}

func TestMergeRetriedShard(t *testing.T) {
	shards := testShards(3, 12, 0)
	retry := shards[1]
	retry.Path = "retry-1.jsonl"
	retry.Header.StartedAt = "2026-12-01T10:05:00Z"
	retry.Records = slices.Clone(retry.Records)
	retry.Records[0].TTFPS = 9 // tells the files apart
	shards = append(shards, retry)

	res, err := Merge(shards, Options{Prefer: PreferNewest})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Merged.Shards[1].File != "retry-1.jsonl" || !slices.ContainsFunc(res.Records, func(r results.Record) bool { return r.TTFPS == 9 }) {
		t.Errorf("--prefer newest kept %s", res.Header.Merged.Shards[1].File)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "kept the newest, retry-1.jsonl") {
		t.Errorf("notes %q", res.Notes)
	}
	res, err = Merge(shards, Options{Prefer: PreferNewest, Keep: []string{"./shard-1.jsonl"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Header.Merged.Shards[1].File != "shard-1.jsonl" || len(res.Records) != 12 {
		t.Errorf("--keep kept %s (%d records)", res.Header.Merged.Shards[1].File, len(res.Records))
	}
	if _, err := Merge(shards, Options{Prefer: "oldest"}); err == nil || !strings.Contains(err.Error(), `"newest"`) {
		t.Errorf("prefer oldest: %v", err)
	}
}

func TestMergeSnapshots(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	snap := func(sec int) *scrape.Snapshot {
		return &scrape.Snapshot{FetchedAt: at.Add(time.Duration(sec) * time.Second), Body: []byte("x 1\n")}
	}
	shards := testShards(3, 12, 0)
	shards[0].Before, shards[0].After = snap(-5), snap(20)
	shards[2].Before, shards[2].After = snap(-9), snap(25)
	res, err := Merge(shards, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Before != shards[2].Before || res.After != shards[2].After || res.ScrapeNote != "" {
		t.Errorf("took before %v after %v (%s), want the earliest and the latest", res.Before.FetchedAt, res.After.FetchedAt, res.ScrapeNote)
	}
	// The test's last response ends 1.611 s after (arrival 11: sent 1.101 s, e2e 0.51 s) the agreed start: an after
	// snapshot at 1 s misses the end, and says so.
	shards[2].After = snap(1)
	shards[0].After = nil
	if res, err = Merge(shards, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.ScrapeNote, "before the last response ended (2026-12-01T10:00:01.611Z)") {
		t.Errorf("after snapshot at 1 s: note %q", res.ScrapeNote)
	}
	shards = testShards(3, 12, 0)
	shards[1].Before = snap(-5)
	res, err = Merge(shards, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Before != nil || res.After != nil || !strings.Contains(res.ScrapeNote, "no shard saw both") {
		t.Errorf("with a before only: %v %v %q", res.Before, res.After, res.ScrapeNote)
	}
}

// Files round-trip: the merged file reads back as a results file, and the
// snapshots land beside it.
func TestMergeFiles(t *testing.T) {
	dir := t.TempDir()
	shards := testShards(2, 6, 1)
	// Shard 0's scrape lines go into the merged file, for its breakdown.
	scrapedAt := time.Date(2026, 12, 1, 9, 59, 59, 0, time.UTC)
	shards[0].Header.Scrapes = []results.Scrape{
		{Type: results.TypeScrape, Phase: results.ScrapeFirst, At: scrapedAt, Series: json.RawMessage(`{"families":[]}`)},
		{Type: results.TypeScrape, Phase: results.ScrapeInterval, At: scrapedAt.Add(time.Second), Gap: "refused"},
		{Type: results.TypeScrape, Phase: results.ScrapeLast, At: scrapedAt.Add(2 * time.Second),
			Series: json.RawMessage(`{"families":[]}`), MeasuredFrom: &scrapedAt},
	}
	for i := range shards {
		path := filepath.Join(dir, shards[i].Path)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		w := results.NewWriter(f)
		if err := w.WriteHeader(shards[i].Header); err != nil {
			t.Fatal(err)
		}
		for _, sc := range shards[i].Header.Scrapes {
			if err := w.WriteScrape(sc); err != nil {
				t.Fatal(err)
			}
		}
		for j := range shards[i].Records {
			if err := w.Write(&shards[i].Records[j]); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		shards[i].Path = path
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for name, ts := range map[string]time.Time{".before.prom": at, ".after.prom": at.Add(time.Minute)} {
		s := &scrape.Snapshot{ContentType: "text/plain; version=0.0.4", FetchedAt: ts, Body: []byte("x 1\n")}
		if err := s.WriteFile(filepath.Join(dir, "shard-0"+name)); err != nil {
			t.Fatal(err)
		}
	}
	var read []Shard
	for _, s := range shards {
		r, err := ReadShard(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		read = append(read, r)
	}
	if read[0].Before == nil || read[0].After == nil || read[1].Before != nil {
		t.Fatalf("snapshots read: %v %v %v", read[0].Before, read[0].After, read[1].Before)
	}
	res, err := Merge(read, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "merged.jsonl")
	written, err := res.WriteFiles(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "merged.before.prom"), filepath.Join(dir, "merged.after.prom")}; !slices.Equal(written, want) {
		t.Errorf("wrote %v, want %v", written, want)
	}
	h, recs, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, res.Header) || len(recs) != 8 {
		t.Errorf("read back %+v with %d records", h, len(recs))
	}
	if !reflect.DeepEqual(h.Scrapes, shards[0].Header.Scrapes) {
		t.Errorf("merged scrape lines %+v, want shard 0's %+v", h.Scrapes, shards[0].Header.Scrapes)
	}
	after, err := scrape.ReadSnapshot(written[1])
	if err != nil || !after.FetchedAt.Equal(at.Add(time.Minute)) {
		t.Errorf("after snapshot %v, %v", after, err)
	}
	// A bare exposition has no time to order by: refused, naming the file.
	bare := filepath.Join(dir, "shard-1.before.prom")
	if err := os.WriteFile(bare, []byte("x 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadShard(shards[1].Path); err == nil || !strings.Contains(err.Error(), bare) {
		t.Errorf("bare exposition: %v", err)
	}
	// Two files of one role: which one the shard took cannot be told.
	s := &scrape.Snapshot{ContentType: "application/openmetrics-text; version=1.0.0", FetchedAt: at, Body: []byte("x 1\n# EOF\n")}
	if err := s.WriteFile(filepath.Join(dir, "shard-0.before.om")); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadShard(shards[0].Path); err == nil || !strings.Contains(err.Error(), "two before snapshots") {
		t.Errorf("two before snapshots: %v", err)
	}
}

func TestSnapshotPath(t *testing.T) {
	for ct, want := range map[string]string{
		"text/plain; version=0.0.4; charset=utf-8": "x.before.prom",
		"": "x.before.prom",
		"application/openmetrics-text; version=1.0.0; charset=utf-8":                                   "x.before.om",
		"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited": "x.before.pb",
	} {
		if got := SnapshotPath("x", RoleBefore, ct); got != want {
			t.Errorf("SnapshotPath(%q) = %s, want %s", ct, got, want)
		}
	}
}

func TestMergeJoinsTheClientVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clients []*results.ClientHealth
		want    *results.ClientHealth
	}{
		{"all fine", []*results.ClientHealth{{ClientDelayMS: 1}, {ClientDelayMS: 2}, {ClientDelayMS: 0.5}},
			&results.ClientHealth{ClientDelayMS: 2}},
		{"one saturated", []*results.ClientHealth{{ClientDelayMS: 1}, {Saturated: true, ClientDelayMS: 9, Reasons: []string{"CPU 90 %"}}, nil},
			&results.ClientHealth{Saturated: true, ClientDelayMS: 9, Reasons: []string{"shard 1: CPU 90 %"}}},
		{"one unknown", []*results.ClientHealth{{ClientDelayMS: 1}, nil, {ClientDelayMS: 2}}, nil},
	} {
		shards := testShards(3, 12, 0)
		for i := range shards {
			shards[i].Header.Client = tc.clients[i]
		}
		res, err := Merge(shards, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(res.Header.Client, tc.want) {
			t.Errorf("%s: merged client %+v, want %+v", tc.name, res.Header.Client, tc.want)
		}
	}
}
