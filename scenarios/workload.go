package scenarios

import (
	"maps"
	"math/bits"
	"slices"

	"github.com/omnibench/omnibench/internal/audio/input"
)

// RequestSpec is everything needed to build one request. It owns its maps
// and slices: nothing in it is shared with another RequestSpec.
type RequestSpec struct {
	Kind          string // results.Kind*
	Endpoint      string // URL path
	Model         string
	Voice         string
	Prompt        string
	AudioFormat   string // FormatWAV or FormatPCM
	Modalities    []string
	ExtraBody     map[string]any
	Headers       map[string]string
	PCMSampleRate int

	// Input audio (see Prompt). The clips are shared read-only by every
	// request that uses them: they are never modified.
	InputAudio      *input.Clip
	RefAudio        *input.Clip
	RefText         string
	AudioInputStyle string // AudioStyleInputAudio or AudioStyleURL
}

// Workload is a validated scenario with its prompts loaded, frozen: later
// changes to the Scenario it came from do not affect it. Safe for concurrent
// use.
type Workload struct {
	s       *Scenario
	prompts []string
	set     []Prompt
	// headers are added to every request after the scenario's (see
	// WithHeaders); they are not part of the scenario.
	headers map[string]string
}

// WithHeaders returns a copy of w whose requests also carry h, after the
// scenario's headers. They are the command line's -H headers, which may be
// credentials (Authorization) that a scenario file, printed and copied
// around, may not hold; the caller has checked them and redacts their
// values from every output. Scenario() does not include them.
func (w *Workload) WithHeaders(h map[string]string) *Workload {
	c := *w
	c.headers = maps.Clone(w.headers)
	if c.headers == nil {
		c.headers = map[string]string{}
	}
	maps.Copy(c.headers, h)
	return &c
}

// WithModel returns a copy of w whose requests ask for model (the run
// command's pick of the one model a server serves). Scenario() shows it.
func (w *Workload) WithModel(model string) *Workload {
	c := *w
	c.s = w.s.Clone()
	c.s.Model = model
	return &c
}

// Workload validates the scenario, loads its prompts and returns a frozen
// copy ready to generate requests.
func (s *Scenario) Workload() (*Workload, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	set, err := s.PromptSet()
	if err != nil {
		return nil, err
	}
	if err := checkPromptsForKind(s.Kind, set); err != nil {
		return nil, err
	}
	if err := s.checkCloning(set); err != nil {
		return nil, err
	}
	return &Workload{s: s.Clone(), prompts: texts(set), set: set}, nil
}

// Scenario returns a copy of the scenario the workload was built from.
func (w *Workload) Scenario() *Scenario { return w.s.Clone() }

// Prompts returns a copy of the loaded prompts.
func (w *Workload) Prompts() []string { return slices.Clone(w.prompts) }

// Prompt returns the prompt of request seq in a run seeded with seed. The
// choice is deterministic, and every len(prompts) consecutive sequence
// numbers starting at a multiple of len(prompts) use each prompt exactly
// once, in an order that depends on seed and on that block.
func (w *Workload) Prompt(seq int, seed int64) string {
	return w.prompts[pick(len(w.prompts), seq, seed)]
}

// Request builds the request of sequence number seq.
func (w *Workload) Request(seq int, seed int64) RequestSpec {
	s := w.s
	p := w.set[pick(len(w.set), seq, seed)]
	return RequestSpec{
		Kind:          s.Kind,
		Endpoint:      s.EndpointPath(),
		Model:         s.Model,
		Voice:         s.Voice,
		Prompt:        p.Text,
		AudioFormat:   s.AudioFormat,
		Modalities:    slices.Clone(s.Modalities),
		ExtraBody:     copyBody(s.ExtraBody),
		Headers:       w.requestHeaders(),
		PCMSampleRate: s.PCMSampleRate,

		InputAudio:      p.Audio,
		RefAudio:        p.RefAudio,
		RefText:         p.RefText,
		AudioInputStyle: s.AudioInputStyle,
	}
}

// pick maps seq to an index in [0, n) without state: block seq/n is
// permuted by the affine bijection i -> (a·i + b) mod n, with a coprime to n
// and a, b derived from seed and the block number.
func pick(n, seq int, seed int64) int {
	if n <= 1 {
		return 0
	}
	u, un := uint64(seq), uint64(n)
	block, pos := u/un, u%un
	h := splitmix64(uint64(seed) ^ splitmix64(block))
	a := 1 + h%(un-1)
	for gcd(a, un) != 1 {
		a = a%(un-1) + 1
	}
	b := splitmix64(h) % un
	return int((mulmod(a, pos, un) + b) % un)
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// mulmod is a·b mod m without overflow.
func mulmod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%m, lo, m)
	return rem
}

// requestHeaders are the scenario's headers with the caller's added.
func (w *Workload) requestHeaders() map[string]string {
	h := maps.Clone(w.s.Headers)
	if len(w.headers) > 0 && h == nil {
		h = map[string]string{}
	}
	maps.Copy(h, w.headers)
	return h
}
