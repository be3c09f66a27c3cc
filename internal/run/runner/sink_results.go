package runner

import (
	"bytes"
	"io"

	"github.com/omnibench/omnibench/internal/run/results"
)

// resultsSink streams the results JSONL: the header, every record as it
// finishes (through headerGate, which holds them until an agreed start has
// begun) and, last, the load generator's health, which compare reads.
type resultsSink struct {
	gate *headerGate
}

// newResultsSink writes (or, waiting for an agreed start, holds) header.
func newResultsSink(out io.Writer, header results.Header, waitForStart bool) (*resultsSink, error) {
	s := &resultsSink{gate: newHeaderGate(results.NewWriter(out), waitForStart)}
	if err := s.gate.WriteHeader(header); err != nil {
		return nil, err
	}
	return s, nil
}

// begin writes the header as the measured phase began and the records
// held until then; later calls do nothing.
func (s *resultsSink) begin(h results.Header) error {
	return s.gate.open(h)
}

func (s *resultsSink) add(rec *results.Record, _ *bytes.Buffer) error {
	return s.gate.Write(rec)
}

// close writes the client's health. The verdict is known only now: it is
// the results file's last line, which compare reads (a run killed before
// here leaves none).
func (s *resultsSink) close(out *Outcome) error {
	return s.gate.w.WriteClient(clientHealth(out.Health))
}
