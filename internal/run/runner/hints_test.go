package runner

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

func modelsServer(t *testing.T, status int, ids ...string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer k" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		var items []string
		for _, id := range ids {
			items = append(items, fmt.Sprintf(`{"id":%q,"object":"model"}`, id))
		}
		fmt.Fprintf(w, `{"object":"list","data":[%s]}`, strings.Join(items, ","))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestModelHint(t *testing.T) {
	notFound := []results.Record{
		{Seq: 0, Warmup: true, Model: "warm", ErrorClass: results.ErrHTTPStatus, Status: 404, Error: "HTTP 404: The model `warm` does not exist."},
		{Seq: 1, Model: "nope", ErrorClass: results.ErrHTTPStatus, Status: 404, Error: "HTTP 404: The model `nope` does not exist."},
	}
	ctx := context.Background()
	var many []string
	for i := range 12 {
		many = append(many, fmt.Sprintf("m%d", i))
	}
	for _, tc := range []struct {
		name string
		url  string
		recs []results.Record
		want string // "" = no hint
	}{
		{"not served", modelsServer(t, 200, "a", "b"), notFound, `hint: the server does not serve model "nope"; GET /v1/models lists "a", "b" (choose one with --model)`},
		{"many served", modelsServer(t, 200, many...), notFound, `lists "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9" and 2 more (choose`},
		{"served after all", modelsServer(t, 200, "nope"), notFound, ""},
		{"no model list", modelsServer(t, 500), notFound, ""},
		{"other failure", modelsServer(t, 200, "a"), []results.Record{{Seq: 1, Model: "nope", ErrorClass: results.ErrHTTPStatus, Status: 404, Error: "HTTP 404: Not Found"}}, ""},
		{"no failure", modelsServer(t, 200, "a"), []results.Record{{Seq: 1, Model: "nope"}}, ""},
	} {
		got := modelHint(ctx, tc.url, "k", tc.recs)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: hint %q, want %q", tc.name, got, tc.want)
		}
	}
}
