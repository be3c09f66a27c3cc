package summary

import (
	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
)

// WorstPicker picks the worst measured response from records offered one at
// a time, in order, keeping only that one: the runner offers every finished
// request and keeps no other chunk timeline. The worst response is the one
// with the largest maximum underrun (the record's own continuity result, or
// the default simulation when it has none); ties go to the longer
// end-to-end time, then to the earlier record. Records without a usable
// chunk timeline are not candidates.
type WorstPicker struct {
	worst     *results.Record
	underrunS float64
	ok        bool
}

// WorstOf offers every record of recs to a new picker.
func WorstOf(recs []results.Record) *WorstPicker {
	p := &WorstPicker{}
	for i := range recs {
		p.Offer(&recs[i])
	}
	return p
}

// Offer considers r; the picker keeps a copy of it when it is the worst so
// far.
func (p *WorstPicker) Offer(r *results.Record) {
	in := continuity.Input{ArrivalsS: r.ChunkArrivalsS, Bytes: r.ChunkBytes, SampleRate: r.SampleRate, SampleWidth: r.SampleWidth, Channels: r.Channels}
	if r.Warmup || !playable(in) {
		return
	}
	u := 0.0
	if r.Continuity != nil {
		u = r.Continuity.MaxUnderrunS
	} else {
		u = continuity.Simulate(in, continuity.Default).MaxUnderrunS
	}
	if !p.ok || u > p.underrunS || (u == p.underrunS && r.E2ES > p.worst.E2ES) {
		cp := *r
		p.worst, p.underrunS, p.ok = &cp, u, true
	}
}

// Worst is the worst response so far and its maximum underrun; ok is false
// when no record offered had a usable chunk timeline.
func (p *WorstPicker) Worst() (worst *results.Record, underrunS float64, ok bool) {
	if p == nil {
		return nil, 0, false
	}
	return p.worst, p.underrunS, p.ok
}

// playable reports whether in has audio that continuity can play: a chunk
// with bytes, one arrival per chunk and a positive byte rate (with
// continuity's defaults: width 2, mono). Exactly these timelines get a
// non-zero continuity result.
func playable(in continuity.Input) bool {
	w, c := in.SampleWidth, in.Channels
	if w == 0 {
		w = 2
	}
	if c == 0 {
		c = 1
	}
	if len(in.ArrivalsS) == 0 || len(in.ArrivalsS) != len(in.Bytes) || in.SampleRate <= 0 || in.SampleRate*w*c <= 0 {
		return false
	}
	for _, b := range in.Bytes {
		if b > 0 {
			return true
		}
	}
	return false
}
