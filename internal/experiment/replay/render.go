package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/report/table"
)

// jsonDocument is the JSON form of a replay (omnibench replay --format json): the file read, one entry per
// response (the same continuity shape as a run's results records) and the
// summary. Times are seconds.
type jsonDocument struct {
	File      string         `json:"file"`
	Format    string         `json:"format"` // "trace" or "results"
	Skipped   map[string]int `json:"skipped,omitempty"`
	Responses []Response     `json:"responses"`
	Summary   Summary        `json:"summary"`
}

// WriteJSON writes the replay of file as one indented JSON document.
func WriteJSON(w io.Writer, file *File, responses []Response, sum Summary) error {
	b, err := json.MarshalIndent(jsonDocument{File: file.Name, Format: file.Format, Skipped: file.Skipped, Responses: responses, Summary: sum}, "", "  ")
	if err != nil {
		return fmt.Errorf("replay: encode JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Tables renders a replay as a per-response table and a summary table.
// Units are in the headers; the player models are explained in notes.
func Tables(file *File, opts Options, responses []Response, sum Summary) []table.Table {
	header := []string{"id", "chunks", "audio (s)", "max underrun (ms)", "underrun events"}
	for _, th := range opts.Thresholds {
		header = append(header, "ok at "+continuity.ThresholdLabel(th)+" ms")
	}
	header = append(header, "S&R stalls", "S&R stall (ms)", "PR start (ms)", "PR stalls", "PR stall (ms)")
	per := table.Table{Title: "Responses", Header: header, Notes: []string{
		"ok at T ms: the longest underrun is at most T. S&R: the stall-and-resume player; PR: the pre-roll player (start: its start-up delay)."}}
	for _, r := range responses {
		row := []string{r.ID, strconv.Itoa(r.Chunks), table.FormatFixed(r.AudioS, 2), ms(r.MaxUnderrunS), strconv.Itoa(r.UnderrunEvents)}
		for _, th := range opts.Thresholds {
			row = append(row, yesNo(r.OK[continuity.ThresholdLabel(th)]))
		}
		row = append(row,
			strconv.Itoa(r.StallResume.Stalls), ms(r.StallResume.TotalStallS),
			ms(r.Preroll.StartupDelayS), strconv.Itoa(r.Preroll.Stalls), ms(r.Preroll.TotalStallS))
		per.Rows = append(per.Rows, row)
	}

	s := table.Table{Title: "Summary", Header: []string{"metric", "value"}}
	add := func(k, v string) { s.Rows = append(s.Rows, []string{k, v}) }
	add("file", file.Name)
	add("responses", strconv.Itoa(sum.Responses))
	if len(file.Skipped) > 0 {
		add("skipped", skippedText(file.Skipped))
	}
	add("audio (s)", table.FormatFixed(sum.AudioS, 2))
	underrun := s.Footnote("underrun: the never-pausing player from the first chunk (docs/reference/continuity.md); continuous = max underrun <= threshold")
	for _, th := range opts.Thresholds {
		l := continuity.ThresholdLabel(th)
		add("continuous <="+l+"ms "+underrun, table.FormatPct(100*sum.ContinuousRate[l]))
	}
	add("responses with underrun", strconv.Itoa(sum.WithUnderrun))
	add("mean max underrun (ms)", ms(sum.MeanMaxUnderrunS))
	add("worst max underrun (ms)", ms(sum.MaxMaxUnderrunS))
	add("mean underrun events", table.FormatFixed(sum.MeanUnderrunEvents, 2))
	wait := "no wait limit"
	if opts.Prebuffer.MaxWaitS > 0 {
		wait = "waits at most " + ms(opts.Prebuffer.MaxWaitS) + " ms"
	}
	for _, p := range []struct {
		name, note string
		s          PlayerSummary
	}{
		{"stall-resume", "stall-resume: starts at the first chunk, pauses while the buffer is dry", sum.StallResume},
		{"pre-roll", "pre-roll: buffers " + ms(opts.Prebuffer.BufferS) + " ms first (" + wait + ")", sum.Preroll},
	} {
		mark := " " + s.Footnote(p.note)
		if p.name == "pre-roll" {
			add("pre-roll mean start-up (ms)"+mark, ms(p.s.MeanStartupDelayS))
			add("pre-roll max start-up (ms)"+mark, ms(p.s.MaxStartupDelayS))
		}
		add(p.name+" responses with stalls"+mark, strconv.Itoa(p.s.WithStalls))
		add(p.name+" mean stalls"+mark, table.FormatFixed(p.s.MeanStalls, 2))
		add(p.name+" mean total stall (ms)"+mark, ms(p.s.MeanTotalStallS))
		add(p.name+" max total stall (ms)"+mark, ms(p.s.MaxTotalStallS))
		add(p.name+" longest stall (ms)"+mark, ms(p.s.LongestStallS))
	}
	modeNote := "Mode default: times relative to the first arrival; a deficit counts only when it is at least one sample frame."
	if opts.Mode == continuity.Reference {
		modeNote = "Mode reference: bit-compatible with the vLLM-Omni reference benchmark (what servers export), rounding residue included."
	}
	s.Notes = append(s.Notes, modeNote)
	return []table.Table{per, s}
}

func ms(s float64) string { return table.FormatFixed(s*1000, 1) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// skippedText lists skip reasons in a stable order: "failed 1, warmup 2".
func skippedText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.Itoa(m[k])
	}
	return strings.Join(parts, ", ")
}
