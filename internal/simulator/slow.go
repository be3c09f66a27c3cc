package simulator

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// maxSlowFactor bounds a slowness factor: beyond it a request outlives any
// sensible test or run.
const maxSlowFactor = 1000

// Slowness makes one part of the pipeline slower than the timing model says,
// so that a breakdown of the server's metrics has something to find: a whole
// stage, one replica of a stage, or one edge between two replicas. The
// slowness is real: it moves the events the client receives, and the
// per-stage and per-edge series record the time it added. The zero value
// slows nothing.
type Slowness struct {
	Stages   []SlowStage
	Replicas []SlowReplica
	Edges    []SlowEdge
}

// SlowStage multiplies every replica of one stage's time by Factor.
type SlowStage struct {
	Stage  int
	Factor float64
}

// SlowReplica multiplies one replica's time by Factor (on top of its
// stage's factor).
type SlowReplica struct {
	Stage, Replica int
	Factor         float64
}

// SlowEdge adds Extra to the in-flight time of every hop from replica
// FromReplica of stage FromStage to replica ToReplica of the next stage.
type SlowEdge struct {
	FromStage, FromReplica, ToReplica int
	Extra                             time.Duration
}

// clone copies the slices so a Config never aliases its caller's.
func (s Slowness) clone() Slowness {
	return Slowness{
		Stages:   append([]SlowStage(nil), s.Stages...),
		Replicas: append([]SlowReplica(nil), s.Replicas...),
		Edges:    append([]SlowEdge(nil), s.Edges...),
	}
}

// validate checks every knob against the topology (replicas per stage).
func (s Slowness) validate(topology []int) error {
	var errs []error
	stageOK := func(st int) bool { return st >= 0 && st < len(topology) }
	replicaOK := func(st, r int) bool { return stageOK(st) && r >= 0 && r < topology[st] }
	factorOK := func(f float64) bool { return !math.IsNaN(f) && f > 0 && f <= maxSlowFactor }
	for i, k := range s.Stages {
		if !stageOK(k.Stage) {
			errs = append(errs, fmt.Errorf("Slow.Stages[%d]: stage %d is not in the %d-stage topology", i, k.Stage, len(topology)))
		}
		if !factorOK(k.Factor) {
			errs = append(errs, fmt.Errorf("Slow.Stages[%d]: factor %v is outside (0, %d]", i, k.Factor, maxSlowFactor))
		}
	}
	for i, k := range s.Replicas {
		if !replicaOK(k.Stage, k.Replica) {
			errs = append(errs, fmt.Errorf("Slow.Replicas[%d]: stage %d replica %d is not in the topology %v", i, k.Stage, k.Replica, topology))
		}
		if !factorOK(k.Factor) {
			errs = append(errs, fmt.Errorf("Slow.Replicas[%d]: factor %v is outside (0, %d]", i, k.Factor, maxSlowFactor))
		}
	}
	for i, k := range s.Edges {
		if !replicaOK(k.FromStage, k.FromReplica) || !replicaOK(k.FromStage+1, k.ToReplica) {
			errs = append(errs, fmt.Errorf("Slow.Edges[%d]: edge %d/%d -> %d/%d is not in the topology %v",
				i, k.FromStage, k.FromReplica, k.FromStage+1, k.ToReplica, topology))
		}
		if k.Extra < 0 || k.Extra > time.Hour {
			errs = append(errs, fmt.Errorf("Slow.Edges[%d]: extra %v is outside 0..1h", i, k.Extra))
		}
	}
	return errors.Join(errs...)
}

// factors is the slowness factor of each stage for a request bound to the
// given replicas.
func (s Slowness) factors(bound []int) []float64 {
	out := make([]float64, len(bound))
	for st, r := range bound {
		f := 1.0
		for _, k := range s.Stages {
			if k.Stage == st {
				f *= k.Factor
			}
		}
		for _, k := range s.Replicas {
			if k.Stage == st && k.Replica == r {
				f *= k.Factor
			}
		}
		out[st] = f
	}
	return out
}

// edgeExtras is the extra in-flight time of each hop from stage st to st+1
// for a request bound to the given replicas (index st).
func (s Slowness) edgeExtras(bound []int) []time.Duration {
	out := make([]time.Duration, max(len(bound)-1, 0))
	for st := range out {
		for _, k := range s.Edges {
			if k.FromStage == st && k.FromReplica == bound[st] && k.ToReplica == bound[st+1] {
				out[st] += k.Extra
			}
		}
	}
	return out
}
