package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// errorMessageWidth is the widest message the error-set table shows in its
// column: with the other four columns and the borders the table stays within
// 100 columns. A longer message is cut there and given whole in a footnote.
const errorMessageWidth = 44

// audioDefect is the class the error set shows flagged responses under
// (results.Record.AudioDefect).
const audioDefect = "audio_defect"

// defectNote says what the audio_defect rows of the error set are: flagged
// responses that completed, so no failures.
const defectNote = "not a failure: completed, kept in the latencies, not in the error rate"

// ErrorSetTable renders the run's error set (summary.Summary.Errors): one row
// per distinct (class, status, message), most frequent first, with the first
// request that failed that way, then one audio_defect row per reason the
// audio checks flagged responses for, marked as no failure. ok is false when
// no measured request failed and none was flagged.
func ErrorSetTable(s *summary.Summary) (t Table, ok bool) {
	defects := defectGroups(s)
	if s == nil || len(s.Errors) == 0 && len(defects) == 0 {
		return Table{}, false
	}
	t = Table{Title: "Errors", Header: []string{"count", "class", "status", "first request", "message"}}
	for _, g := range s.Errors {
		status := "-"
		if g.Status != 0 {
			status = strconv.Itoa(g.Status)
		}
		msg := g.Message
		if utf8.RuneCountInString(msg) > errorMessageWidth {
			// Cut where a word may be longer than the column (a URL): the
			// whole message is the footnote.
			msg = cutRunes(msg, errorMessageWidth-8) + "... " + t.Footnote(msg)
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(g.Count), g.Class, status, g.FirstID, msg})
	}
	for _, d := range defects {
		t.Rows = append(t.Rows, []string{strconv.Itoa(d.count), audioDefect, "-", "-", d.reason + " (" + defectNote + ")"})
	}
	if s.ErrorsOmitted > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d more failures with other messages are not listed (at most %d rows).", s.ErrorsOmitted, summary.MaxErrorGroups))
	}
	if s.NothingMeasured() {
		t.Notes = append(t.Notes, NothingMeasured(s))
	}
	return t, true
}

// NothingMeasured words the failure of a run in which no measured request
// completed, with its most frequent reason: what stderr, the report and the
// HTML banner say.
func NothingMeasured(s *summary.Summary) string {
	switch {
	case s.Requests.Total == 0 && s.Requests.Dropped > 0:
		return fmt.Sprintf("nothing was measured: all %d arrivals were dropped by --max-inflight", s.Requests.Dropped)
	case s.Requests.Total == 0 && s.Requests.Ramp > 0:
		return fmt.Sprintf("nothing was measured: all %d requests were in the ramp, which the figures leave out (--include-ramp keeps them)", s.Requests.Ramp)
	case s.Requests.Total == 0:
		return "nothing was measured: no request was sent"
	case s.TopReason() == "":
		return fmt.Sprintf("nothing was measured: none of %d requests completed", s.Requests.Total)
	case s.Requests.ByError[results.ErrNoAudio] > 0:
		msg := "nothing was measured: no response carried audio: " + insteadOfAudio(s)
		if top := s.Errors[0]; top.Class != results.ErrNoAudio {
			msg += "; top reason: " + top.String()
		}
		return msg
	}
	return fmt.Sprintf("nothing was measured: none of %d requests completed; top reason: %s", s.Requests.Total, s.TopReason())
}

// insteadOfAudio says what the no_audio failures got instead of audio: the
// messages of their error-set groups, with their counts.
func insteadOfAudio(s *summary.Summary) string {
	var parts []string
	for _, g := range s.Errors {
		if g.Class == results.ErrNoAudio {
			parts = append(parts, fmt.Sprintf("%s (%d of %d requests)", g.Message, g.Count, s.Requests.Total))
		}
	}
	if len(parts) == 0 {
		// Every no_audio group was past the error set's cap.
		return fmt.Sprintf("%d of %d requests", s.Requests.ByError[results.ErrNoAudio], s.Requests.Total)
	}
	return strings.Join(parts, "; ")
}

// defectGroup is the count of flagged responses for one audio_defect reason.
type defectGroup struct {
	reason string
	count  int
}

// defectGroups are the run's audio_defect reasons (summary.Quality.ByDefect),
// most frequent first, ties by name; nil when none was flagged.
func defectGroups(s *summary.Summary) []defectGroup {
	if s == nil || s.Quality == nil {
		return nil
	}
	var out []defectGroup
	for reason, n := range s.Quality.ByDefect {
		if n > 0 {
			out = append(out, defectGroup{reason, n})
		}
	}
	slices.SortFunc(out, func(a, b defectGroup) int {
		return cmp.Or(cmp.Compare(b.count, a.count), cmp.Compare(a.reason, b.reason))
	})
	return out
}

// failureBanner is the section the HTML run report opens with when nothing
// was measured, so the page cannot be mistaken for a result.
func failureBanner(s *summary.Summary) (HTMLSection, bool) {
	if s == nil || !s.NothingMeasured() {
		return HTMLSection{}, false
	}
	b := HTMLSection{Title: "Run failed: nothing was measured", Notes: []string{NothingMeasured(s)}, alert: true}
	if t, ok := ErrorSetTable(s); ok {
		b.Tables = []Table{t}
	}
	return b, true
}

// cutRunes returns the first n characters of s.
func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// stderrErrorRows is how many error-set rows the stderr summary shows; the
// report has them all.
const stderrErrorRows = 5

// ErrorSetText is the error set for stderr: a count line and the most
// frequent groups, one per line, then the dropped arrivals beside them, each
// line starting with prefix; "" when no measured request failed and none was
// dropped. The responses the audio checks flagged follow as their own
// group, one line per reason, said to be no failures.
func ErrorSetText(s *summary.Summary, prefix string) string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	if len(s.Errors) > 0 {
		fmt.Fprintf(&b, "%s%d of %d measured requests failed (error rate %s):\n", prefix, s.Requests.Failed, s.Requests.Total, FormatFixed(s.Requests.ErrorRate, 4))
		for i, g := range s.Errors {
			if i == stderrErrorRows {
				fmt.Fprintf(&b, "%s  ... %d more kinds of failure in the report's error table\n", prefix, len(s.Errors)-i)
				break
			}
			fmt.Fprintf(&b, "%s  %s\n", prefix, g)
		}
	}
	if defects := defectGroups(s); len(defects) > 0 {
		fmt.Fprintf(&b, "%s%d of %d checked responses flagged audio_defect (%s):\n", prefix, s.Quality.Defects, s.Quality.Checked, defectNote)
		for _, d := range defects {
			fmt.Fprintf(&b, "%s  %d× %s: %s\n", prefix, d.count, audioDefect, d.reason)
		}
	}
	if d := s.Requests.Dropped; d > 0 {
		fmt.Fprintf(&b, "%s%d open-loop arrivals dropped by --max-inflight, never sent (drop rate %s)\n", prefix, d, FormatFixed(s.Requests.DropRate, 4))
	}
	return b.String()
}
