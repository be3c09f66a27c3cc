package report

// BreakdownView is the breakdown of a run (where the time went by the
// server's own metrics) as the report shows it. The breakdown package
// builds it: report draws tables, bars and lines, it does not read
// metrics.
type BreakdownView struct {
	// Tables are printed after the server-vs-client table: per stage and
	// replica, per edge, the attribution and the findings as notes.
	Tables []Table
	// Parts are the attribution of the client's mean latency, in order
	// (each stage, the transfers, the rest of the server, the client's
	// side), for the HTML waterfall; empty when it cannot be split, and
	// Note then says why.
	Parts []WaterfallPart
	Note  string
	// Timelines are the server's gauges and rates over the run, drawn
	// under the client's load on the same time axis (seconds since the
	// run started).
	Timelines []ServerTimeline
}

// WaterfallPart is one bar of the waterfall: a label and its mean time.
type WaterfallPart struct {
	Label   string
	Seconds float64
}

// ServerTimeline is one chart of server series over time.
type ServerTimeline struct {
	ID, Title, YLabel string
	Series            []TimeSeries
	// Gaps are the times (seconds since the run started) of scrapes that
	// failed, marked on the chart.
	Gaps []float64
}

// TimeSeries is one named line: its values at the given times.
type TimeSeries struct {
	Name   string
	Xs, Ys []float64
}
