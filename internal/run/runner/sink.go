package runner

import (
	"bytes"
	"sync"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// A sink is one consumer of the run's finished records: the results file,
// saved audio, the figures, the progress counts, Config.OnRecord. Run hands
// each record to every sink in turn, on the one bookkeeping goroutine (see
// recordQueue), in the order the requests finished; a sink therefore needs
// no lock for what only add and close touch. Adding an output is adding a
// sink in its own file and a line in newSinks.
type sink interface {
	// add takes one finished record, redacted, with its decoded audio
	// when --save-audio asked for it (nil otherwise). add must not change
	// rec (the next sinks read it); the run drops both after the last
	// sink, so a sink keeps only what it copies. It runs once per
	// request: it should not allocate beyond what it keeps.
	add(rec *results.Record, audio *bytes.Buffer) error
	// close is called once, after the last add, when the run's outcome and
	// verdicts are known (out.Health is judged), also when it was
	// interrupted.
	close(out *Outcome) error
}

// A beginner is a sink that must know when the measured phase begins: the
// header records how late this process was for an agreed start. begin is
// called from the load generator's goroutine, possibly while records are
// added, and again after the load (for a run interrupted before the
// measured phase began): only the first call counts.
type beginner interface {
	begin(h results.Header) error
}

// noClose is embedded by the sinks that have nothing to do at the end.
type noClose struct{}

func (noClose) close(*Outcome) error { return nil }

// newSinks lists the run's sinks, in the order each record reaches them.
// The figures come first, so that what is written has been counted.
func (r *run) newSinks() ([]sink, error) {
	r.out.Set, r.out.Worst = summary.NewSet(), new(summary.WorstPicker)
	r.refused = new(refusedModelSink)
	sinks := []sink{(*setSink)(r.out.Set), (*worstSink)(r.out.Worst), r.refused, r.col}
	if r.cfg.SaveAudioDir != "" {
		sinks = append(sinks, newAudioSink(r.cfg.SaveAudioDir, r.cfg.Log))
	}
	var rs *resultsSink
	if r.cfg.Out != nil {
		var err error
		if rs, err = newResultsSink(r.cfg.Out, r.out.Header, !r.cfg.Load.StartAt.IsZero()); err != nil {
			return nil, err
		}
		sinks = append(sinks, rs)
		r.results = rs
	}
	if r.cfg.ASR.URL != "" {
		r.asr = newASRSink(r.cfg.ASR, r.out.Set, rs, &r.cfg)
		sinks = append(sinks, r.asr)
	}
	if r.cfg.OnRecord != nil {
		sinks = append(sinks, onRecordSink(r.cfg.OnRecord))
	}
	return sinks, nil
}

// firstError keeps the first error the sinks returned, from any goroutine.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (e *firstError) keep(err error) {
	if err == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
	}
}

func (e *firstError) get() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}
