package runner

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The status line fits the terminal's width less one column, so that the
// carriage return of the next update rewrites it in place: the least
// telling parts go first, the count and the time stay.
func TestProgressLineFitsTheWidth(t *testing.T) {
	s := progressState{done: 14, target: 200, inflight: 8, failed: 1, ttfpP50MS: 412, measuring: true,
		elapsed: 12 * time.Second, duration: time.Minute}
	for _, tc := range []struct {
		width int
		want  string
	}{
		{80, "14/200 done  8 in flight  1 errors  TTFP p50 412ms  12s of 1m0s, 48s left"},
		{70, "14/200 done  1 errors  TTFP p50 412ms  12s of 1m0s, 48s left"},
		{50, "14/200 done  1 errors  12s of 1m0s, 48s left"},
		{40, "14/200 done  12s of 1m0s, 48s left"},
		{20, "14/200 done  12s of"},
		{1, ""},
	} {
		if got := s.text(tc.width); got != tc.want || len(got) > max(tc.width-1, 0) {
			t.Errorf("at %d columns: %q, want %q", tc.width, got, tc.want)
		}
	}
	var buf bytes.Buffer
	line := &progressLine{w: &buf, width: func() int { return 0 }} // unknown: 80
	if line.columns() != defaultProgressWidth {
		t.Errorf("unknown width taken as %d columns", line.columns())
	}
}

// With -d the line says how long the measured phase has run and how long
// it has left; without, how long it has run; before it, that the warm-up
// is going on.
func TestProgressTextTimes(t *testing.T) {
	base := progressState{done: 14, inflight: 2, ttfpP50MS: -1}
	for _, tc := range []struct {
		mutate func(*progressState)
		want   string
	}{
		{func(s *progressState) {
			s.measuring, s.elapsed, s.duration = true, 12*time.Second+400*time.Millisecond, time.Minute
		}, "14/? done  2 in flight  0 errors  TTFP p50 -  12s of 1m0s, 48s left"},
		{func(s *progressState) { s.measuring, s.elapsed, s.duration = true, 2*time.Minute, time.Minute }, "2m0s of 1m0s, 0s left"},
		{func(s *progressState) { s.measuring, s.elapsed, s.target = true, 5*time.Second, 200 }, "14/200 done  2 in flight  0 errors  TTFP p50 -  5s elapsed"},
		{func(s *progressState) { s.duration = time.Minute }, "TTFP p50 -  warming up"},
	} {
		s := base
		tc.mutate(&s)
		if got := s.text(100); !strings.HasSuffix(got, tc.want) {
			t.Errorf("%+v: line %q, want it to end %q", s, got, tc.want)
		}
	}
}

// A log line (the Ctrl-C notice) written while the status line is shown
// starts on a row of its own.
func TestProgressLogStartsOnItsOwnRow(t *testing.T) {
	var buf bytes.Buffer
	line := &progressLine{w: &buf}
	log := line.above(&buf)
	line.show("3/? done")
	fmt.Fprintln(log, "omnibench: interrupted: cancelling 2 in-flight requests")
	fmt.Fprintln(log, "omnibench: a second line")
	line.show("4/? done")
	line.clear()
	want := "\r\033[K3/? done\nomnibench: interrupted: cancelling 2 in-flight requests\nomnibench: a second line\n\r\033[K4/? done\r\033[K"
	if got := buf.String(); got != want {
		t.Errorf("terminal got %q, want %q", got, want)
	}
}
