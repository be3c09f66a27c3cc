package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/report"
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
func Tables(file *File, opts Options, responses []Response, sum Summary) []report.Table {
	header := []string{"id", "chunks", "audio s", "max underrun ms", "events"}
	for _, th := range opts.Thresholds {
		header = append(header, "ok <="+continuity.ThresholdLabel(th)+"ms")
	}
	header = append(header, "stall-resume stalls", "stall-resume total ms", "pre-roll start ms", "pre-roll stalls", "pre-roll total ms")
	per := report.Table{Title: "Responses (" + file.Name + ")", Header: header}
	for _, r := range responses {
		row := []string{r.ID, strconv.Itoa(r.Chunks), fmt.Sprintf("%.2f", r.AudioS), ms(r.MaxUnderrunS), strconv.Itoa(r.UnderrunEvents)}
		for _, th := range opts.Thresholds {
			row = append(row, yesNo(r.OK[continuity.ThresholdLabel(th)]))
		}
		row = append(row,
			strconv.Itoa(r.StallResume.Stalls), ms(r.StallResume.TotalStallS),
			ms(r.Preroll.StartupDelayS), strconv.Itoa(r.Preroll.Stalls), ms(r.Preroll.TotalStallS))
		per.Rows = append(per.Rows, row)
	}

	s := report.Table{Title: "Summary", Header: []string{"metric", "value"}}
	add := func(k, v string) { s.Rows = append(s.Rows, []string{k, v}) }
	add("responses", strconv.Itoa(sum.Responses))
	if len(file.Skipped) > 0 {
		add("skipped", skippedText(file.Skipped))
	}
	add("audio s", fmt.Sprintf("%.2f", sum.AudioS))
	for _, th := range opts.Thresholds {
		l := continuity.ThresholdLabel(th)
		add("continuous <="+l+"ms", fmt.Sprintf("%.1f%%", 100*sum.ContinuousRate[l]))
	}
	add("responses with underrun", strconv.Itoa(sum.WithUnderrun))
	add("mean max underrun ms", ms(sum.MeanMaxUnderrunS))
	add("worst max underrun ms", ms(sum.MaxMaxUnderrunS))
	add("mean underrun events", fmt.Sprintf("%.2f", sum.MeanUnderrunEvents))
	for _, p := range []struct {
		name string
		s    PlayerSummary
	}{{"stall-resume", sum.StallResume}, {"pre-roll", sum.Preroll}} {
		if p.name == "pre-roll" {
			add("pre-roll mean start-up ms", ms(p.s.MeanStartupDelayS))
			add("pre-roll max start-up ms", ms(p.s.MaxStartupDelayS))
		}
		add(p.name+" responses with stalls", strconv.Itoa(p.s.WithStalls))
		add(p.name+" mean stalls", fmt.Sprintf("%.2f", p.s.MeanStalls))
		add(p.name+" mean total stall ms", ms(p.s.MeanTotalStallS))
		add(p.name+" max total stall ms", ms(p.s.MaxTotalStallS))
		add(p.name+" longest stall ms", ms(p.s.LongestStallS))
	}
	modeNote := "mode default: times relative to the first arrival; a deficit counts only when it is at least one sample frame"
	if opts.Mode == continuity.Reference {
		modeNote = "mode reference: bit-compatible with the vLLM-Omni reference benchmark (what servers export), rounding residue included"
	}
	wait := "no wait limit"
	if opts.Prebuffer.MaxWaitS > 0 {
		wait = "waits at most " + ms(opts.Prebuffer.MaxWaitS) + " ms"
	}
	s.Notes = []string{
		"underrun: never-pausing player from the first chunk (protocol section 7); continuous = max underrun <= threshold",
		modeNote,
		"stall-resume: starts at the first chunk, pauses when dry; pre-roll: buffers " + ms(opts.Prebuffer.BufferS) + " ms first (" + wait + ")",
	}
	return []report.Table{per, s}
}

func ms(s float64) string { return fmt.Sprintf("%.1f", s*1000) }

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
