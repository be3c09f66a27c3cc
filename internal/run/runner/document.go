package runner

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
)

// Document is the JSON summary of a run (`run --summary FILE`, `run --format
// json`). Its schema is versioned by SchemaVersion (results.SchemaVersion)
// and documented in docs/run.md; fields are only ever added.
type Document struct {
	SchemaVersion int            `json:"schema_version"`
	Run           results.Header `json:"run"`
	Interrupted   bool           `json:"interrupted"`
	// InterruptedDuring names the phase an interrupt hit: "load",
	// "settle" or "metrics-linger" (Outcome.InterruptedDuring).
	InterruptedDuring string `json:"interrupted_during,omitempty"`
	// Failure says why the run is not a result ("nothing was measured: ...,
	// top reason: ..."); empty when something was measured.
	Failure string             `json:"failure,omitempty"`
	Summary *summary.Summary   `json:"summary"`
	Bench   map[string]float64 `json:"bench"` // vLLM-Omni benchmark key names
	Load    LoadDocument       `json:"load"`
	// Client is the load generator's own health; client.saturated says
	// the figures include the client's delay (sweep and capacity mark
	// such levels).
	Client *selfmon.Report `json:"client,omitempty"`
	Server *ServerDocument `json:"server,omitempty"`
	// Breakdown is where the time went by the server's own metrics (stage
	// by stage, replica by replica, hop by hop) and the attribution of the
	// client's latency; computable false with the reasons when it cannot be
	// told. Absent when the run did not look at the server.
	Breakdown *breakdown.Breakdown `json:"breakdown,omitempty"`
	// ServerTimeline is the server's gauges and rates between consecutive
	// scrapes (run --scrape-interval), oldest first.
	ServerTimeline []breakdown.Point `json:"server_timeline,omitempty"`
	SLOs           json.RawMessage   `json:"slos,omitempty"`
	Extra          map[string]any    `json:"extra,omitempty"`
	// Notes are what the run found worth saying beside its figures
	// (Outcome.Notes), such as certificates not verified (--insecure).
	Notes []string `json:"notes,omitempty"`
}

// LoadDocument is the load generator's account of the run.
type LoadDocument struct {
	Mode            string  `json:"mode"`
	Planned         int     `json:"planned"`
	Scheduled       int     `json:"scheduled"`
	Started         int     `json:"started"`
	Completed       int     `json:"completed"`
	Cancelled       int     `json:"cancelled"`
	Dropped         int     `json:"dropped"`
	RampStarted     int     `json:"ramp_started,omitempty"`
	Late            int     `json:"late"`
	LateThresholdS  float64 `json:"late_threshold_s"`
	MaxLagS         float64 `json:"max_lag_s"`
	WarmupStarted   int     `json:"warmup_started"`
	ElapsedS        float64 `json:"elapsed_s"`
	TargetRate      float64 `json:"target_rate"`
	AchievedRate    float64 `json:"achieved_rate"`
	InterruptedLoad bool    `json:"interrupted"`
}

// ServerDocument holds the /metrics snapshots, their diff and the
// server-vs-client comparison.
type ServerDocument struct {
	MetricsURL     string              `json:"metrics_url"`
	Note           string              `json:"note,omitempty"`
	Before         *SnapshotDocument   `json:"before,omitempty"`
	After          *SnapshotDocument   `json:"after,omitempty"`
	Delta          json.RawMessage     `json:"delta,omitempty"`
	ServerVsClient []report.Comparison `json:"server_vs_client,omitempty"`
}

// SnapshotDocument describes one /metrics snapshot. The raw body is not
// embedded (a large exposition made summaries of tens of megabytes): it is
// written next to the summary when asked (run --save-scrapes), and File
// names it (Outcome.BeforeFile, AfterFile).
type SnapshotDocument struct {
	FetchedAt   time.Time `json:"fetched_at"`
	ContentType string    `json:"content_type"`
	Bytes       int       `json:"bytes"`
	File        string    `json:"file,omitempty"`
}

// Document builds the run's JSON summary.
func (o *Outcome) Document() *Document {
	doc := &Document{
		SchemaVersion:     results.SchemaVersion,
		Run:               o.Header,
		Interrupted:       o.Interrupted,
		InterruptedDuring: o.InterruptedDuring,
		Summary:           o.Summary,
		Bench:             o.Summary.Bench(),
		Load:              loadDocument(o.Load),
		Client:            o.Health,
		Notes:             o.Notes,
		Breakdown:         o.Breakdown,
		ServerTimeline:    o.Timeline,
	}
	realtimeBench(doc.Bench, o.Set.Realtime(), o.Summary.Percentiles, o.Summary.DurationS)
	if o.Summary.NothingMeasured() {
		doc.Failure = report.NothingMeasured(o.Summary)
	}
	if o.Before != nil || o.ScrapeNote != "" {
		sd := &ServerDocument{MetricsURL: o.MetricsURL, Note: o.ScrapeNote, Before: snapshotDocument(o.Before, o.BeforeFile), After: snapshotDocument(o.After, o.AfterFile)}
		if o.StatsOff && sd.Note == "" {
			sd.Note = statsOffNote
		}
		if o.Delta != nil {
			var buf bytes.Buffer
			if err := o.Delta.WriteJSON(&buf, scrape.TableOptions{}); err == nil {
				sd.Delta = json.RawMessage(bytes.TrimSpace(buf.Bytes()))
			}
			sd.ServerVsClient = o.ServerVsClient()
		}
		doc.Server = sd
	}
	return doc
}

// Report is the run report the tables and the HTML page render.
func (o *Outcome) Report() report.RunReport {
	rep := report.RunReport{Header: o.Header, Summary: o.Summary, Load: &o.Load, Workload: report.WorkloadOfSet(o.Set), ServerVsClient: o.ServerVsClient(), Health: o.Health}
	if o.Breakdown != nil {
		rep.Breakdown = BreakdownView(o.Breakdown, o.Timeline, o.MeasuredFrom)
	}
	rep.Notes = append(rep.Notes, o.ClientNotes...)
	if o.ScrapeNote != "" {
		rep.Notes = append(rep.Notes, o.ScrapeNote)
	}
	if o.Interrupted {
		rep.Notes = append(rep.Notes, "the run was interrupted: figures cover the requests that finished")
	}
	rep.Notes = append(rep.Notes, o.Notes...)
	return rep
}

func loadDocument(s load.Stats) LoadDocument {
	return LoadDocument{
		Mode: s.Mode, Planned: s.Planned, Scheduled: s.Scheduled, Started: s.Started, Completed: s.Completed,
		Cancelled: s.Cancelled, Dropped: s.Dropped, RampStarted: s.RampStarted, Late: s.Late, LateThresholdS: s.LateThreshold.Seconds(),
		MaxLagS: s.MaxLag.Seconds(), WarmupStarted: s.WarmupStarted, ElapsedS: s.Elapsed.Seconds(),
		TargetRate: s.TargetRate, AchievedRate: s.AchievedRate, InterruptedLoad: s.Interrupted,
	}
}

func snapshotDocument(s *scrape.Snapshot, file string) *SnapshotDocument {
	if s == nil {
		return nil
	}
	return &SnapshotDocument{FetchedAt: s.FetchedAt, ContentType: s.ContentType, Bytes: len(s.Body), File: file}
}
