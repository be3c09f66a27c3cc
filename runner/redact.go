package runner

import "net/url"

// redactURL removes any user:password from a URL before it is written
// anywhere.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	u.User = nil
	return u.String()
}
