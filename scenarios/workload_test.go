package scenarios

import (
	"fmt"
	"math/big"
	"slices"
	"sync"
	"testing"
)

// SplitMix64 reference: from state 0 the first output is 0xe220a8397b1dcdaf
// (Vigna's splitmix64.c).
func TestSplitMix64Reference(t *testing.T) {
	if got := splitmix64(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("splitmix64(0) = %#x, want 0xe220a8397b1dcdaf", got)
	}
}

func TestMulModAgainstBig(t *testing.T) {
	cases := [][3]uint64{{3, 5, 7}, {1<<63 + 5, 1<<62 + 9, 1<<61 - 1}, {^uint64(0), ^uint64(0), 1000003}}
	for _, c := range cases {
		want := new(big.Int).Mod(new(big.Int).Mul(new(big.Int).SetUint64(c[0]), new(big.Int).SetUint64(c[1])), new(big.Int).SetUint64(c[2]))
		if got := mulmod(c[0], c[1], c[2]); got != want.Uint64() {
			t.Errorf("mulmod%v = %d, want %d", c, got, want)
		}
	}
}

func TestPickIsAPermutationPerBlock(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 30, 64} {
		for _, seed := range []int64{0, 1, -5} {
			for block := range 3 {
				seen := make([]bool, n)
				for pos := range n {
					i := pick(n, block*n+pos, seed)
					if i < 0 || i >= n || seen[i] {
						t.Fatalf("n=%d seed=%d block=%d: index %d repeated or out of range", n, seed, block, i)
					}
					seen[i] = true
				}
			}
		}
	}
}

func TestPromptDeterministic(t *testing.T) {
	s, _ := Get("tts-short")
	w, err := s.Workload()
	if err != nil {
		t.Fatal(err)
	}
	order := func(seed int64) []string {
		var out []string
		for seq := range 24 {
			out = append(out, w.Prompt(seq, seed))
		}
		return out
	}
	a, b, c := order(1), order(1), order(2)
	if !slices.Equal(a, b) {
		t.Error("the same seed gave different prompts")
	}
	if slices.Equal(a, c) {
		t.Error("seeds 1 and 2 gave the same prompt order")
	}
	if slices.Equal(a[:12], a[12:]) {
		t.Error("two blocks repeat the same order")
	}
	w2, _ := s.Workload()
	if w2.Prompt(17, 9) != w.Prompt(17, 9) {
		t.Error("two workloads of one scenario disagree")
	}
}

func TestRequestOwnsItsState(t *testing.T) {
	s, _ := Get("chat-voice")
	s.ExtraBody = map[string]any{"opts": map[string]any{"list": []any{"a"}}}
	s.Headers = map[string]string{"X-Test": "1"}
	w, err := s.Workload()
	if err != nil {
		t.Fatal(err)
	}
	// Later changes to the scenario do not reach the workload.
	s.Model = "changed"
	s.ExtraBody["opts"].(map[string]any)["list"].([]any)[0] = "changed"

	r := w.Request(0, 1)
	if r.Model != "Qwen/Qwen3-Omni-30B-A3B-Instruct" || r.Endpoint != "/v1/chat/completions" || r.Kind != "chat" || r.AudioFormat != "wav" {
		t.Errorf("request %+v", r)
	}
	if r.Prompt != w.Prompt(0, 1) {
		t.Errorf("prompt %q, want %q", r.Prompt, w.Prompt(0, 1))
	}
	// Requests built concurrently and mutated by their owners share nothing
	// (the race detector checks this).
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				r := w.Request(g*50+i, 1)
				r.ExtraBody["opts"].(map[string]any)["list"].([]any)[0] = fmt.Sprint(g)
				r.ExtraBody["stream"] = true
				r.Headers["X-Test"] = "2"
				r.Modalities[0] = "x"
			}
		})
	}
	wg.Wait()
	r = w.Request(1, 1)
	if r.ExtraBody["opts"].(map[string]any)["list"].([]any)[0] != "a" || r.Headers["X-Test"] != "1" || r.Modalities[0] != "text" || len(r.ExtraBody) != 1 {
		t.Errorf("a request saw another's changes: %+v", r)
	}
}

func TestWorkloadRejectsInvalid(t *testing.T) {
	s, _ := Get("tts-short")
	s.Kind = "x"
	if _, err := s.Workload(); err == nil {
		t.Error("no error for an invalid scenario")
	}
	s, _ = Get("tts-short")
	s.PromptSpec.Source = "/nonexistent/prompts.txt"
	if _, err := s.Workload(); err == nil {
		t.Error("no error for a missing prompts file")
	}
}

func FuzzParseScenario(f *testing.F) {
	for _, n := range Names() {
		src, _ := Source(n)
		f.Add(string(src))
	}
	f.Add(validYAML)
	f.Add("extra_body: {1: 2}\n")
	f.Add("load: [1, 2]\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := parse("f.yaml", []byte(in))
		if err != nil {
			return
		}
		_ = validateAt("f.yaml", []byte(in), s) // must not panic
		_ = s.Clone()
	})
}
