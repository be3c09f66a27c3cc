package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxErrorGroups caps the error set: a server whose messages differ per
// request (a request id in every message) must not turn the summary into a
// copy of the records. Failures beyond the cap are counted in
// Summary.ErrorsOmitted and a warning says so.
const MaxErrorGroups = 20

// maxErrorMessage caps one message of the error set, in bytes.
const maxErrorMessage = 200

// ErrorGroup is one row of the error set (after vegeta's): the failed
// measured requests that share an error class, an HTTP status and a message;
// cancellations and timeouts share their class alone, and their message is
// the first request's.
type ErrorGroup struct {
	Class   string `json:"class"`
	Status  int    `json:"status,omitempty"` // HTTP status, when a response arrived
	Message string `json:"message"`          // as the record says it (the server's words, secrets removed), trimmed
	Count   int    `json:"count"`
	FirstID string `json:"first_request_id"` // the earliest request (by sequence number) with this error
	// firstSeq orders the ties and picks FirstID.
	firstSeq int
}

// String is the group on one line. The status is left out: the client's
// message of an HTTP failure starts with it ("HTTP 404: ...").
func (g ErrorGroup) String() string {
	return fmt.Sprintf("%d× %s: %s (first %s)", g.Count, g.Class, g.Message, g.FirstID)
}

// errorSet groups the failed measured requests by (class, status, message),
// most frequent first (ties: the earliest first request); ramp-phase ones
// count only with includeRamp, as in the rest of the summary. It returns at
// most MaxErrorGroups groups and the number of failures left out (with those
// past the Set's bound on distinct messages).
func (s *Set) errorSet(includeRamp bool) (groups []ErrorGroup, omitted int) {
	type key struct {
		class   string
		status  int
		message string
	}
	index := map[key]int{}
	for _, ek := range s.errorOrder {
		if ek.ramp && !includeRamp {
			continue
		}
		e := s.errors[ek]
		k := key{ek.class, ek.status, ek.message}
		j, ok := index[k]
		if !ok {
			j = len(groups)
			index[k] = j
			groups = append(groups, ErrorGroup{Class: k.class, Status: k.status, Message: e.firstMessage, FirstID: e.firstID, firstSeq: e.firstSeq})
		}
		g := &groups[j]
		g.Count += e.count
		if e.firstSeq < g.firstSeq {
			g.firstSeq, g.FirstID, g.Message = e.firstSeq, e.firstID, e.firstMessage
		}
	}
	slices.SortFunc(groups, func(a, b ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.firstSeq, b.firstSeq))
	})
	if len(groups) > MaxErrorGroups {
		for _, g := range groups[MaxErrorGroups:] {
			omitted += g.Count
		}
		groups = groups[:MaxErrorGroups]
	}
	omitted += s.errorsUnkept[0]
	if includeRamp {
		omitted += s.errorsUnkept[1]
	}
	return groups, omitted
}

// trimMessage makes a record's message one short line: whitespace runs become
// one space and it is cut to maxErrorMessage bytes at a character boundary.
func trimMessage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(no message)"
	}
	if len(s) <= maxErrorMessage {
		return s
	}
	cut := maxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// NothingMeasured reports whether no measured request completed: a run whose
// figures describe nothing, which must not pass.
func (s *Summary) NothingMeasured() bool { return s.Requests.Completed == 0 }

// TopReason is the most frequent failure of the run ("" when none failed).
func (s *Summary) TopReason() string {
	if len(s.Errors) == 0 {
		return ""
	}
	return s.Errors[0].String()
}

// SetDropped records the open-loop arrivals the load generator dropped
// (load.Stats.Dropped: --max-inflight refused them, so they were never sent)
// and their share of the measured arrivals, dropped / (sent + dropped).
func (s *Summary) SetDropped(n int) {
	s.Requests.Dropped = n
	s.Requests.DropRate = 0
	if d := s.Requests.Total + n; d > 0 {
		s.Requests.DropRate = float64(n) / float64(d)
	}
}
