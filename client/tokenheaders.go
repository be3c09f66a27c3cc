package client

import (
	"net/http"
	"strconv"

	"github.com/omnibench/omnibench/results"
)

// tokenHeaders reads the X-VLLM-OMNI-*-TOKENS headers of a speech response
// (protocol section 10). It returns nil when none is present; a header that
// is not a non-negative integer is left out (it is the server's bookkeeping,
// not what the benchmark measures).
func tokenHeaders(h http.Header) *results.ServerTokens {
	var t results.ServerTokens
	found := false
	for _, f := range []struct {
		name string
		dst  **int
	}{
		{"X-VLLM-OMNI-INPUT-TOKENS", &t.Input},
		{"X-VLLM-OMNI-OUTPUT-TOKENS", &t.Output},
		{"X-VLLM-OMNI-TOTAL-TOKENS", &t.Total},
		{"X-VLLM-OMNI-INPUT-TEXT-TOKENS", &t.InputText},
		{"X-VLLM-OMNI-INPUT-AUDIO-TOKENS", &t.InputAudio},
	} {
		v := h.Get(f.name)
		if v == "" || len(v) > 18 {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			continue
		}
		*f.dst = &n
		found = true
	}
	if !found {
		return nil
	}
	return &t
}
