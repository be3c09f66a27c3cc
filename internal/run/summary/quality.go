package summary

import (
	"math"

	"github.com/omnibench/omnibench/internal/run/results"
)

// Metric names of the audio-quality figures. Like the latencies, they are
// taken over the measured completed responses; a flagged response keeps its
// latencies (a defect is not a failure).
const (
	// MetricInternalGap is each checked response's longest internal gap
	// (results.AudioCheck.LongestGapS), so that internal_gap's max is the
	// run's longest.
	MetricInternalGap = "internal_gap_ms"
	// MetricWER and MetricCER are the transcription scores of the responses
	// the transcriber scored (results.ASRScore), as fractions.
	MetricWER = "wer"
	MetricCER = "cer"
)

// DefaultWERThreshold is the word error rate above which a scored response
// counts in Quality.ASR.Above: about one word in five wrong, a misheard
// phrase rather than a misheard word.
const DefaultWERThreshold = 0.2

// Quality is the audio-quality part of a summary: the signal checks
// (--audio-checks) and the transcription scores (--asr-url). It is absent
// when neither ran.
type Quality struct {
	// Checked counts the measured completed responses whose audio was
	// checked; Defects those of them flagged audio_defect, DefectRate
	// Defects / Checked, ByDefect the count per reason (a response can
	// have several).
	Checked    int            `json:"checked"`
	Defects    int            `json:"audio_defects"`
	DefectRate float64        `json:"audio_defect_rate"`
	ByDefect   map[string]int `json:"by_defect,omitempty"`
	// InternalGapMaxS is the longest internal gap of any checked response.
	InternalGapMaxS float64 `json:"internal_gap_max_s"`
	ASR             *ASR    `json:"asr,omitempty"`
}

// ASR counts the transcriptions. Scored responses have a WER (the wer
// metric has their distribution); Offered, Sampled and Failed are known in a
// live run only (a results file holds the scores, not the queue).
type ASR struct {
	Scored  int `json:"scored"`
	Offered int `json:"offered,omitempty"` // measured responses with audio offered to the transcriber
	// Skipped were offered when the queue was full: the sampling that keeps
	// the transcriber from slowing the load.
	Skipped    int     `json:"skipped,omitempty"`
	Failed     int     `json:"failed,omitempty"`
	WERMean    float64 `json:"wer_mean"`
	Threshold  float64 `json:"wer_threshold"`
	Above      int     `json:"above_threshold"`
	ShareAbove float64 `json:"share_above_threshold"`
}

// ASRCounts are a live run's transcription queue counts (Set.NoteASR).
type ASRCounts struct {
	Offered, Skipped, Failed int
}

// quality is what the quality figures read of one request.
type quality struct {
	longestGapS float64 // with checked
	wer, cer    float64 // with scored
	defects     uint8   // bit i: the Set's defect name i
	checked     bool    // a signal check
	scored      bool    // a transcription score
}

// qualityAt returns the quality of sample i, growing the table to it.
func (s *Set) qualityAt(i int) *quality {
	if i >= len(s.qualities) {
		s.qualities = append(s.qualities, make([]quality, i+1-len(s.qualities))...)
	}
	return &s.qualities[i]
}

// addQuality takes r's check and score as sample i's, interning defect
// names.
func (s *Set) addQuality(i int, r *results.Record) {
	if a := r.Audio; a != nil {
		q := s.qualityAt(i)
		q.checked, q.longestGapS = true, a.LongestGapS
		for _, d := range a.Defects {
			q.defects |= 1 << s.defectBit(d)
		}
	}
	if a := r.ASR; a != nil {
		q := s.qualityAt(i)
		q.scored, q.wer, q.cer = true, a.WER, a.CER
	}
}

// maxDefectNames is how many distinct defect names a Sample has bits for;
// the last bit stands for any further name (otherString).
const maxDefectNames = 8

func (s *Set) defectBit(name string) int {
	for i, n := range s.defectNames {
		if n == name {
			return i
		}
	}
	if len(s.defectNames) == maxDefectNames-1 {
		s.defectNames = append(s.defectNames, otherString)
	}
	if len(s.defectNames) >= maxDefectNames {
		return maxDefectNames - 1
	}
	s.defectNames = append(s.defectNames, name)
	return len(s.defectNames) - 1
}

// SetASR gives the i-th sample added (from 0) its transcription score:
// transcription finishes after the record was added.
func (s *Set) SetASR(i int, score results.ASRScore) {
	if i < 0 || i >= s.Len() {
		return
	}
	q := s.qualityAt(i)
	q.scored, q.wer, q.cer = true, score.WER, score.CER
}

// NoteASR records a live run's transcription queue counts.
func (s *Set) NoteASR(c ASRCounts) { s.asr = &c }

// qualityValues gathers the quality counts request by request (the
// distributions are figures.go's).
type qualityValues struct {
	q            Quality
	byDefect     [maxDefectNames]int
	checked, asr bool
	scored       int
	werSum       float64
	above        int // scored WERs above DefaultWERThreshold
}

// add counts sample i, a measured completed response with audio.
func (v *qualityValues) add(set *Set, i int) {
	if i >= len(set.qualities) {
		return
	}
	r := &set.qualities[i]
	if r.checked {
		v.checked = true
		v.q.Checked++
		v.q.InternalGapMaxS = math.Max(v.q.InternalGapMaxS, r.longestGapS)
		if r.defects != 0 {
			v.q.Defects++
			for i := range v.byDefect {
				if r.defects&(1<<i) != 0 {
					v.byDefect[i]++
				}
			}
		}
	}
	if r.scored {
		v.asr = true
		v.scored++
		v.werSum += r.wer
		if r.wer > DefaultWERThreshold {
			v.above++
		}
	}
}

// finish sets s.Quality when anything was checked or scored.
func (v *qualityValues) finish(s *Summary, set *Set) {
	if !v.checked && !v.asr && set.asr == nil {
		return
	}
	q := v.q
	if q.Checked > 0 {
		q.DefectRate = float64(q.Defects) / float64(q.Checked)
	}
	for i, n := range v.byDefect {
		if n > 0 {
			if q.ByDefect == nil {
				q.ByDefect = map[string]int{}
			}
			q.ByDefect[set.defectNames[i]] = n
		}
	}
	if v.asr || set.asr != nil {
		a := &ASR{Scored: v.scored, Threshold: DefaultWERThreshold, Above: v.above}
		if c := set.asr; c != nil {
			a.Offered, a.Skipped, a.Failed = c.Offered, c.Skipped, c.Failed
		}
		if a.Scored > 0 {
			a.WERMean = v.werSum / float64(a.Scored)
			a.ShareAbove = float64(a.Above) / float64(a.Scored)
		}
		q.ASR = a
	}
	s.Quality = &q
}
