package abtest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/metrics/check"
	"github.com/omnibench/omnibench/scrape"
)

// ErrStatsMismatch is wrapped by *StatsMismatchError: an arm did not show
// the stats it claimed, so the experiment is not the one asked for. The
// command maps it to exit status 2 (unusable input: a wrong flag).
var ErrStatsMismatch = errors.New("the arms do not show the stats they claim")

// ArmStats is what one arm claimed about its server's stats and what its
// /metrics showed.
type ArmStats struct {
	Arm   string // "A" or "B"
	Claim StatsClaim
	Args  []string // the arguments meant to give Claim
	On    bool     // what the scrape showed (meaningless when Err is set)
	How   string   // check.DetectStats's explanation
	Err   string   // why /metrics could not be read: nothing was shown
}

// Holds reports whether the arm showed what it claimed.
func (s ArmStats) Holds() bool {
	return s.Err == "" && s.On == (s.Claim == StatsOn)
}

// Shown says what the arm showed: "on (detected: ...)", or the scrape error.
func (s ArmStats) Shown() string {
	if s.Err != "" {
		return "nothing: " + s.Err
	}
	return s.How
}

func (s ArmStats) describe() string {
	args := "no argument"
	if len(s.Args) > 0 {
		args = JoinArgs(RedactArgs(s.Args))
	}
	return fmt.Sprintf("arm %s (claimed stats %s, with %s) showed %s", s.Arm, s.Claim, args, s.Shown())
}

// StatsMismatchError is returned by Run when an arm's /metrics does not show
// the stats the arm claims (Arm.Stats): with `ab --log-stats` both arms ran
// with stats off, say, because the stats-on flag was wrong. There is then no
// verdict. Suspect names the arm whose arguments are probably wrong ("A" or
// "B"), "both" when they look swapped, or "" when an arm's /metrics could not
// be read.
type StatsMismatchError struct {
	A, B    *ArmStats // nil for an arm that claims nothing
	Suspect string
}

func (e *StatsMismatchError) Error() string {
	var parts []string
	for _, s := range []*ArmStats{e.A, e.B} {
		if s != nil {
			parts = append(parts, s.describe())
		}
	}
	msg := "abtest: no verdict: the arms do not differ in stats as claimed: " + strings.Join(parts, "; ")
	switch e.Suspect {
	case "A":
		msg += "; probably wrong: arm A's stats-on argument(s), which did not turn stats on (servers whose stats are off by default need --log-stats)"
	case "B":
		msg += "; probably wrong: arm B's stats-off argument(s), which did not turn stats off (current vLLM-Omni servers need --disable-log-stats)"
	case "both":
		msg += "; the stats-on and stats-off arguments look swapped"
	default:
		msg += "; the claim cannot be verified without the arm's /metrics"
	}
	return msg
}

func (e *StatsMismatchError) Unwrap() error { return ErrStatsMismatch }

// observeStats records what the arm's scrape shows about its stats.
func (st *armState) observeStats(snap *scrape.Snapshot, fetchErr error) {
	s := &ArmStats{Arm: st.name, Claim: st.spec.Stats, Args: st.spec.StatsArgs}
	st.stats = s
	if fetchErr != nil {
		s.Err = fetchErr.Error()
		return
	}
	fams, err := snap.Families()
	if err != nil {
		s.Err = fmt.Sprintf("parsing %s: %v", snap.Source(), err)
		return
	}
	s.On, s.How = check.DetectStats(fams)
	st.res.Stats = s.How
}

// verifyStats compares the claims of the arms with what they showed, once
// every claiming arm has been observed (so that the error can say what both
// showed). It returns nil while an observation is missing or when every
// claim holds.
func verifyStats(arms [2]*armState) error {
	e := &StatsMismatchError{}
	holds := true
	for _, st := range arms {
		if st.spec.Stats == StatsUnclaimed {
			continue
		}
		if st.stats == nil {
			return nil // not observed yet
		}
		if st.name == "A" {
			e.A = st.stats
		} else {
			e.B = st.stats
		}
		holds = holds && st.stats.Holds()
	}
	if holds {
		return nil
	}
	e.Suspect = suspect(e.A, e.B)
	return e
}

// suspect names the arm whose stats arguments are probably wrong.
func suspect(a, b *ArmStats) string {
	if (a != nil && a.Err != "") || (b != nil && b.Err != "") {
		return ""
	}
	aWrong := a != nil && !a.Holds()
	bWrong := b != nil && !b.Holds()
	switch {
	case aWrong && bWrong:
		return "both"
	case aWrong:
		return "A"
	case bWrong:
		return "B"
	}
	return ""
}
