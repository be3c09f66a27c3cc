package runner

import (
	"fmt"
	"io"
	"math"

	"github.com/omnibench/omnibench/internal/metrics/check"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/stats"
)

// statsOffNote is what a run against a server with stats off says, once,
// instead of a table of zeros beside the client's figures.
const statsOffNote = "server stats are off: no server-side figures"

// checkServerStats sets StatsOff, and says so on log and in the notes, when
// the second scrape shows the server's stats are off (check.DetectStats, the
// detection of `check --stats auto`). A run in which no request completed
// gives the server nothing to count, so it is not judged.
func (o *Outcome) checkServerStats(log io.Writer) {
	if o.After == nil || o.Delta == nil || check.FiguresFromSet(o.Set).CompletedTotal == 0 {
		return
	}
	fams, err := o.After.Families()
	if err != nil {
		return
	}
	if on, how := check.DetectStats(fams); !on {
		o.StatsOff = true
		o.note(log, statsOffNote+" ("+how+"; the server runs without --log-stats?)")
	}
}

// bucketNote explains a quantile row: the server's figure is estimated
// from its histogram, so only a client value outside the bucket is a
// difference.
const bucketNote = "server: histogram_quantile over the bucket deltas, with the bucket that holds it (lower-upper); " +
	"the true value is anywhere in that bucket, so a difference shows only when the client's value lies outside it"

// ServerVsClient sets what the server's /metrics delta says beside what the
// client measured, figure by figure. Warm-up requests are included on both
// sides: the server counted them too. It returns nil without a delta.
//
// A shard's server delta counts the requests of every shard, so a shard
// leaves the count rows out (one row says so) and compares only the
// distributions: means and quantiles, which the shards of one test share.
func (o *Outcome) ServerVsClient() []report.Comparison {
	if o.Delta == nil || o.StatsOff {
		return nil
	}
	d := o.Delta
	fig := check.FiguresFromSet(o.Set)
	var after scrape.Families
	if o.After != nil {
		after, _ = o.After.Families() // unreadable: judged from the delta alone
	}
	speech := check.JudgeSpeechStreams(after, d, &fig)
	c := &comparisons{shards: o.Header.ShardCount}

	success, okSuccess := d.CounterDelta("requests_success_total", nil)
	abort, _ := d.CounterDelta("requests_success_total", map[string]string{"finished_reason": "abort"})
	c.count("requests completed", success-abort, float64(fig.CompletedTotal), okSuccess, "requests_success_total without finished_reason=\"abort\"")
	c.count("requests aborted", abort, float64(fig.Completed["abort"]), okSuccess, "server: finished_reason=\"abort\"; client: failed after the response started")

	frames, okFrames := d.CounterDelta("audio_frames_total", nil)
	c.count("audio frames", frames, float64(fig.AudioFrames), okFrames, "audio_frames_total vs frames the client decoded")

	skipped, okSkipped := d.CounterDelta("audio_skipped_requests_total", nil)
	c.count("requests without audio (skipped)", skipped, float64(noAudio(o)), okSkipped, "audio_skipped_requests_total vs successful responses with no audio")

	o.ttfpRows(c, fig, speech)
	o.speechStreamRows(c, fig)

	// The server's RTF is generation time / duration, which no stream
	// carries: its /metrics is where "the server's RTF" becomes known.
	if rtf, ok := d.HistogramDelta("audio_rtf", nil); ok && rtf.Count > 0 {
		c.add("RTF mean", rtf.Sum/rtf.Count, mean(audioRTFs(o)), true, "",
			"RTF: server = generation time / audio duration, without network and queueing; client = the benchmark's audio_rtf (last chunk for chat, e2e for speech)")
	}
	if dur, ok := d.HistogramDelta("audio_duration_s", nil); ok && dur.Count > 0 {
		c.add("audio duration mean", dur.Sum/dur.Count, mean(durations(o)), true, "s", "frames / sample rate on both sides")
	}

	e2e, okE2E := d.HistogramDelta("e2e_request_latency_s", nil)
	c.count("e2e observations", e2e.Count, float64(fig.CompletedTotal), okE2E, "one per completed request")
	if okE2E && e2e.Count > 0 {
		c.quantile("e2e p50", e2e.QuantileBounds(0.5), percentile(e2es(o), 50))
	}

	for _, th := range sortedKeys(fig.Continuous, streamsCounted(speech, fig.SpeechContinuous)) {
		ok, okCont := d.CounterDelta("audio_continuity_ok_total", map[string]string{"threshold_ms": th})
		client := fig.Continuous[th] + streamsCounted(speech, fig.SpeechContinuous)[th]
		c.count("continuity OK ("+th+" ms)", ok, float64(client), okCont,
			joinNote("server: its own send clock, reference player; client: arrival clock", speechNote(speech, fig)))
	}
	c.shardRow()
	return c.rows
}

// comparisons collects the rows of ServerVsClient. shards is the run's
// shard count (0 or 1: not sharded).
type comparisons struct {
	rows       []report.Comparison
	shards     int
	countsLeft bool // a count row was left out because of the shards
}

// add adds one row; a NaN on either side is a value that side lacks.
func (c *comparisons) add(figure string, server, client float64, haveServer bool, unit, note string) {
	if c.shards > 1 && haveServer {
		note = joinNote(note, fmt.Sprintf("server: all %d shards; client: this shard", c.shards))
	}
	row := report.Comparison{Figure: figure, Unit: unit, Note: note}
	if !math.IsNaN(client) {
		row.Client = &client
	}
	if haveServer && !math.IsNaN(server) {
		row.Server = &server
		if row.Client != nil {
			diff := server - client
			row.Diff = &diff
		}
	}
	c.rows = append(c.rows, row)
}

// count adds a row of counts, which a shard leaves out: the server
// counted the other shards' requests too.
func (c *comparisons) count(figure string, server, client float64, haveServer bool, note string) {
	if c.shards > 1 {
		c.countsLeft = true
		return
	}
	c.add(figure, server, client, haveServer, "", note)
}

// quantile adds a row of a latency quantile in ms (est and client in
// seconds). The server's estimate is shown with its bucket, and the
// difference only when the client's value lies outside that bucket.
func (c *comparisons) quantile(figure string, est scrape.QuantileEstimate, client float64) {
	c.add(figure, 1000*est.Value, 1000*client, true, "ms", bucketNote)
	row := &c.rows[len(c.rows)-1]
	if row.Server == nil {
		return
	}
	row.ServerBucket = &report.Bucket{Low: finiteMS(est.Lower), High: finiteMS(est.Upper)}
	if row.Client != nil && est.Contains(client) {
		row.Diff = nil
	}
}

// finiteMS is a bucket bound in ms, nil when unbounded.
func finiteMS(s float64) *float64 {
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return nil
	}
	ms := 1000 * s
	return &ms
}

// shardRow says, for a shard, that the count rows are left out and where
// to compare them.
func (c *comparisons) shardRow() {
	if !c.countsLeft {
		return
	}
	c.rows = append(c.rows, report.Comparison{Figure: "counts (requests, frames, observations)",
		Note: "left out: server counts include the other shards; compare after merge (omnibench check merged.before.* merged.after.* --run merged.jsonl)"})
}

// ttfpRows compares the server's TTFP observations with the client's
// streams: chat, and speech streams where the server records them
// (check.JudgeSpeechStreams). When it does not, the run's speech streams get
// a row of their own that says so, and a speech-only run gets no TTFP
// comparison: zero against zero would be a false match.
func (o *Outcome) ttfpRows(c *comparisons, fig check.RunFigures, speech check.SpeechVerdict) {
	ttfp, okTTFP := o.Delta.HistogramDelta("audio_ttfp_s", nil)
	streams := fig.ChatAudioResponses
	if speech.Counted {
		streams += fig.SpeechStreams
	}
	if fig.SpeechStreams > 0 && !speech.Counted {
		c.add("speech streams in the audio families", math.NaN(), float64(fig.SpeechStreams), false, "",
			"not recorded: "+speech.How+"; their TTFP and continuity are not compared")
		if fig.ChatAudioResponses == 0 {
			return
		}
	}
	c.count("TTFP observations", ttfp.Count, float64(streams), okTTFP, joinNote("one per streamed response with audio", speechNote(speech, fig)))
	clientTTFP := streamTTFPs(o, speech.Counted)
	if okTTFP && ttfp.Count > 0 {
		c.add("TTFP mean", 1000*ttfp.Sum/ttfp.Count, 1000*mean(clientTTFP), true, "ms", "server measures from request arrival, so it should not exceed the client's")
		for _, q := range []float64{0.5, 0.95} {
			c.quantile(fmt.Sprintf("TTFP p%g", q*100), ttfp.QuantileBounds(q), percentile(clientTTFP, q*100))
		}
	}
}

// speechStreamRows compares the speech-stream counters, when the server
// has them under the names the simulator gives them.
func (o *Outcome) speechStreamRows(c *comparisons, fig check.RunFigures) {
	if done, ok := o.Delta.CounterDelta(omnimetrics.SpeechStreamCompletedFamily, nil); ok {
		c.count("speech streams completed", done, float64(fig.SpeechCompleted), true,
			omnimetrics.SpeechStreamCompletedFamily+" vs successful speech streams")
	}
	if aborted, ok := o.Delta.CounterDelta(omnimetrics.SpeechStreamAbortedFamily, nil); ok {
		c.count("speech streams aborted", aborted, math.NaN(), true,
			omnimetrics.SpeechStreamAbortedFamily+", all reasons: the client cannot tell which failures the server counts")
	}
}

// speechNote says which streams the audio families count, when the run has
// speech streams.
func speechNote(speech check.SpeechVerdict, fig check.RunFigures) string {
	switch {
	case fig.SpeechStreams == 0 && fig.SpeechCompleted == 0:
		return ""
	case speech.Counted:
		return "chat and speech streams: " + speech.How
	}
	return "chat streams only: " + speech.How
}

// streamsCounted is m when the server records speech streams, else nil.
func streamsCounted(speech check.SpeechVerdict, m map[string]int) map[string]int {
	if speech.Counted {
		return m
	}
	return nil
}

func joinNote(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

func noAudio(o *Outcome) int {
	n := 0
	o.Set.All(func(r *summary.Sample) {
		if o.Set.Delivered(r) && !r.HasAudio() {
			n++
		}
	})
	return n
}

// streamTTFPs (chat, and speech streams when withSpeech) and e2es read the send-relative offsets, not Record.Latency, on
// purpose: the server starts its clock when the request arrives and cannot
// see the client's scheduling lag, so the comparable client figure is the
// one measured from the send.
func streamTTFPs(o *Outcome, withSpeech bool) []float64 {
	var xs []float64
	o.Set.All(func(r *summary.Sample) {
		if (o.Set.ChatPath(r) || withSpeech && o.Set.SpeechStream(r)) && r.TTFPS > 0 {
			xs = append(xs, r.TTFPS)
		}
	})
	return xs
}

func audioRTFs(o *Outcome) []float64 {
	var xs []float64
	o.Set.All(func(r *summary.Sample) {
		if !o.Set.OK(r) || r.AudioDurationS <= 0 {
			return
		}
		if o.Set.ChatPath(r) {
			xs = append(xs, r.RTFLastChunk)
		} else {
			xs = append(xs, r.RTFE2E)
		}
	})
	return xs
}

func durations(o *Outcome) []float64 {
	var xs []float64
	o.Set.All(func(r *summary.Sample) {
		if o.Set.OK(r) && r.AudioDurationS > 0 {
			xs = append(xs, r.AudioDurationS)
		}
	})
	return xs
}

func e2es(o *Outcome) []float64 {
	var xs []float64
	o.Set.All(func(r *summary.Sample) {
		if o.Set.OK(r) {
			xs = append(xs, r.E2ES)
		}
	})
	return xs
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return stats.Summarize(xs, nil).Mean
}

func percentile(xs []float64, p float64) float64 {
	s := stats.Summarize(xs, []float64{p})
	v, _ := s.Percentile(p)
	return v
}

// sortedKeys returns the keys of the maps, each once.
func sortedKeys(maps ...map[string]int) []string {
	var keys []string
	seen := map[string]bool{}
	for _, m := range maps {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	// Threshold labels are integers: order them numerically.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && less(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func less(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}
