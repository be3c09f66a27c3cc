package summary

import (
	"fmt"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

func failed(seq int, class string, status int, msg string) results.Record {
	return results.Record{ID: fmt.Sprintf("req-%06d", seq), Seq: seq, ErrorClass: class, Status: status, Error: msg}
}

func TestErrorSetGroupsByClassStatusMessage(t *testing.T) {
	recs := []results.Record{
		failed(5, results.ErrHTTPStatus, 404, "HTTP 404: The model `x` does not exist."),
		failed(2, results.ErrHTTPStatus, 404, "HTTP 404:  The model `x`\n does not exist. "), // same after trimming
		failed(3, results.ErrHTTPStatus, 500, "HTTP 404: The model `x` does not exist."),     // other status
		failed(4, results.ErrConnect, 0, "dial tcp 127.0.0.1:1: connect: connection refused"),
		failed(9, results.ErrHTTPStatus, 404, "HTTP 404: The model `x` does not exist."),
		{ID: "req-000001", Seq: 1, E2ES: 1},                             // completed
		{ID: "req-000000", Seq: 0, Warmup: true, ErrorClass: "connect"}, // warm-up: not counted
	}
	s := Compute(recs, Options{})
	want := []ErrorGroup{
		{Class: results.ErrHTTPStatus, Status: 404, Message: "HTTP 404: The model `x` does not exist.", Count: 3, FirstID: "req-000002"},
		{Class: results.ErrHTTPStatus, Status: 500, Message: "HTTP 404: The model `x` does not exist.", Count: 1, FirstID: "req-000003"},
		{Class: results.ErrConnect, Message: "dial tcp 127.0.0.1:1: connect: connection refused", Count: 1, FirstID: "req-000004"},
	}
	if len(s.Errors) != len(want) {
		t.Fatalf("error set %+v, want %+v", s.Errors, want)
	}
	for i := range want {
		g := s.Errors[i]
		g.firstSeq = 0
		if g != want[i] {
			t.Errorf("group %d = %+v, want %+v", i, g, want[i])
		}
	}
	approx(t, "error rate", s.Requests.ErrorRate, 5.0/6)
	if got := s.TopReason(); !strings.Contains(got, "3× http_status: HTTP 404: The model `x` does not exist. (first req-000002)") {
		t.Errorf("top reason %q", got)
	}
	if s.NothingMeasured() {
		t.Error("one request completed: something was measured")
	}
	if !Compute(recs[:5], Options{}).NothingMeasured() {
		t.Error("no request completed: NothingMeasured = false")
	}
}

func TestErrorSetCapSaysWhatItLeftOut(t *testing.T) {
	var recs []results.Record
	for i := range MaxErrorGroups + 5 {
		recs = append(recs, failed(i, results.ErrStreamError, 200, fmt.Sprintf("event 1: server error: request %d failed", i)))
	}
	recs = append(recs, failed(100, results.ErrStreamError, 200, "event 1: server error: request 0 failed"))
	s := Compute(recs, Options{})
	if len(s.Errors) != MaxErrorGroups || s.ErrorsOmitted != 5 {
		t.Fatalf("%d groups, %d omitted; want %d, 5", len(s.Errors), s.ErrorsOmitted, MaxErrorGroups)
	}
	if s.Errors[0].Count != 2 || s.Errors[0].FirstID != "req-000000" {
		t.Errorf("most frequent first: %+v", s.Errors[0])
	}
	if !strings.Contains(strings.Join(s.Warnings, "\n"), "5 failures") {
		t.Errorf("warnings %q do not say what the cap left out", s.Warnings)
	}
}

func TestErrorSetTrimsLongMessages(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes
	s := Compute([]results.Record{failed(0, results.ErrMalformed, 200, long)}, Options{})
	m := s.Errors[0].Message
	if len(m) > maxErrorMessage+3 || !strings.HasSuffix(m, "...") || !strings.HasPrefix(m, "éé") {
		t.Errorf("trimmed message %d bytes: %q", len(m), m)
	}
	if s := Compute([]results.Record{failed(0, results.ErrMalformed, 200, "  ")}, Options{}); s.Errors[0].Message != "(no message)" {
		t.Errorf("empty message rendered %q", s.Errors[0].Message)
	}
}

func TestSetDropped(t *testing.T) {
	s := Compute([]results.Record{{ID: "a"}, {ID: "b"}, {ID: "c"}}, Options{})
	s.SetDropped(1)
	if s.Requests.Dropped != 1 {
		t.Errorf("dropped %d", s.Requests.Dropped)
	}
	approx(t, "drop rate", s.Requests.DropRate, 0.25)
}

// Ramp-phase failures are left out of the error set like the rest of the
// ramp, unless the ramp is included.
func TestErrorSetLeavesOutTheRamp(t *testing.T) {
	ramp := failed(0, results.ErrConnect, 0, "refused")
	ramp.Phase = "ramp"
	recs := []results.Record{ramp, failed(1, results.ErrTimeout, 0, "deadline")}
	if s := Compute(recs, Options{}); len(s.Errors) != 1 || s.Errors[0].Class != results.ErrTimeout {
		t.Errorf("without the ramp: %+v", s.Errors)
	}
	if s := Compute(recs, Options{IncludeRamp: true}); len(s.Errors) != 2 {
		t.Errorf("with the ramp: %+v", s.Errors)
	}
}

// Cancellations and timeouts differ per request only in how far each got:
// they form one group per class, with the earliest request's message.
func TestErrorSetGroupsCancellationsAndTimeoutsByClass(t *testing.T) {
	var recs []results.Record
	for i := range 6 {
		recs = append(recs,
			failed(10+i, results.ErrCancelled, 200, fmt.Sprintf("run interrupted after %d events: context canceled", i+3)),
			failed(20+i, results.ErrIdleTimeout, 200, fmt.Sprintf("no data received for the idle timeout, after %d events", i)))
	}
	recs = append(recs, failed(30, results.ErrTimeout, 200, "request deadline passed after 7 events"),
		failed(31, results.ErrTimeout, 200, "request deadline passed after 9 events"))
	s := Compute(recs, Options{})
	want := []ErrorGroup{
		{Class: results.ErrCancelled, Status: 200, Message: "run interrupted after 3 events: context canceled", Count: 6, FirstID: "req-000010"},
		{Class: results.ErrIdleTimeout, Status: 200, Message: "no data received for the idle timeout, after 0 events", Count: 6, FirstID: "req-000020"},
		{Class: results.ErrTimeout, Status: 200, Message: "request deadline passed after 7 events", Count: 2, FirstID: "req-000030"},
	}
	if len(s.Errors) != len(want) {
		t.Fatalf("error set %+v, want %+v", s.Errors, want)
	}
	for i := range want {
		g := s.Errors[i]
		g.firstSeq = 0
		if g != want[i] {
			t.Errorf("group %d = %+v, want %+v", i, g, want[i])
		}
	}
}
