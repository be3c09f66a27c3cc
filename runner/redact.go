package runner

import (
	"maps"

	"github.com/omnibench/omnibench/secret"
)

// redactURL removes any user:password from a URL before it is written
// anywhere (the same rule every package uses: secret.URL).
func redactURL(raw string) string { return secret.URL(raw) }

// redactFlags returns the flags of the results header with every known
// credential and every URL's userinfo removed from their values.
func redactFlags(r *secret.Redactor, flags map[string]string) map[string]string {
	if flags == nil {
		return nil
	}
	out := maps.Clone(flags)
	for k, v := range out {
		out[k] = r.String(secret.URL(v))
	}
	return out
}
