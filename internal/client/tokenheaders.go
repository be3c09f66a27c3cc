package client

import (
	"net/http"
	"strconv"

	"github.com/omnibench/omnibench/internal/run/results"
)

// tokenHeaders reads the X-VLLM-OMNI-*-TOKENS headers of a speech response
// (docs/reference/http-streams.md, section 3.5). It returns nil when none is present; a header that
// is not a non-negative integer is left out (it is the server's bookkeeping,
// not what the benchmark measures).
func tokenHeaders(h http.Header) *results.ServerTokens {
	// The names are written in their canonical form and looked up in the
	// map directly: Header.Get canonicalises (and allocates) on every call,
	// five times per request.
	names := [...]string{
		"X-Vllm-Omni-Input-Tokens", "X-Vllm-Omni-Output-Tokens", "X-Vllm-Omni-Total-Tokens",
		"X-Vllm-Omni-Input-Text-Tokens", "X-Vllm-Omni-Input-Audio-Tokens",
	}
	var t *results.ServerTokens
	for k, name := range names {
		vs := h[name]
		if len(vs) == 0 || vs[0] == "" || len(vs[0]) > 18 {
			continue
		}
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 0 {
			continue
		}
		if t == nil {
			t = new(results.ServerTokens)
		}
		*[...]**int{&t.Input, &t.Output, &t.Total, &t.InputText, &t.InputAudio}[k] = &n
	}
	return t
}
