// Package secret keeps the credentials a user gave omnibench out of
// everything it writes and prints.
//
// One Redactor is built per command from every credential the command line
// holds (the API key, every -H header value, the user and password of any
// URL, the environment values and secret-looking flags of ab's server
// commands) and is applied to every output: results lines, summaries, HTML,
// JUnit, Markdown and CSV, stdout and stderr, the server logs ab keeps and
// the metrics files. Matching is by value, not by where a value came from, so
// a server that quotes a credential back in an error body is caught as well;
// the tokens of Bearer and Basic credentials are masked whoever they belong
// to.
//
// Server text is redacted where it enters a record or an error, before it is
// cut to length (Redactor.Clip): a cut first would leave the start of a
// credential that straddles it, which no later pass recognises. URL is the
// one way a URL is shown.
package secret

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Mask replaces every credential.
const Mask = "[redacted]"

// MinLen is the shortest value treated as a secret: a shorter one ("1", "on")
// would blank out unrelated text everywhere. URL passwords of any length are
// still removed structurally by URL.
const MinLen = 4

// Redactor replaces known secret values by Mask, and the tokens of Bearer
// and Basic credentials whoever they belong to. The zero value and nil know
// no secret values but still mask those tokens. A Redactor is immutable once
// built and safe for concurrent use.
type Redactor struct {
	secrets []string // longest first, so a secret containing another goes whole
	// raw holds secrets as bytes: Bytes looks for them in every line a
	// redacting writer passes, and a string conversion of the line per
	// secret would copy it each time.
	raw  [][]byte
	repl *strings.Replacer
}

// New returns a Redactor for the given values (empty and too-short values
// are ignored, duplicates merged).
func New(values ...string) *Redactor {
	seen := map[string]bool{}
	var secrets []string
	for _, v := range values {
		if len(v) >= MinLen && !seen[v] {
			seen[v] = true
			secrets = append(secrets, v)
		}
	}
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	r := &Redactor{secrets: secrets}
	if len(secrets) > 0 {
		pairs := make([]string, 0, 2*len(secrets))
		for _, s := range secrets {
			pairs = append(pairs, s, Mask)
			r.raw = append(r.raw, []byte(s))
		}
		r.repl = strings.NewReplacer(pairs...)
	}
	return r
}

// With returns a Redactor that also redacts values.
func (r *Redactor) With(values ...string) *Redactor {
	if r == nil {
		return New(values...)
	}
	return New(append(slices.Clone(r.secrets), values...)...)
}

// Empty reports whether r knows no secret value (it still masks
// authentication tokens).
func (r *Redactor) Empty() bool { return r == nil || r.repl == nil }

// String returns s with every secret replaced by Mask, and the token of
// every Bearer or Basic credential (see maskSchemes).
func (r *Redactor) String(s string) string {
	if !r.Empty() {
		s = r.repl.Replace(s)
	}
	return maskSchemes(s)
}

// Bytes returns b with every secret replaced by Mask (b itself when none
// occurs).
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.containsAny(b) && !hasScheme(b) {
		return b
	}
	return []byte(r.String(string(b)))
}

func (r *Redactor) containsAny(b []byte) bool {
	if r.Empty() {
		return false
	}
	for _, s := range r.raw {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

// Clip returns s redacted (String) and then cut to at most n bytes at a
// character boundary, with "..." appended when cut. Redacting first matters:
// a secret straddling the cut would otherwise survive as its first part.
// A cut that leaves the start of a secret anyway (MinLen bytes or more:
// the text held the secret's start but not its end) or the start of a
// Bearer or Basic token masks that start too.
func (r *Redactor) Clip(s string, n int) string {
	s = r.String(s)
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return r.maskTail(s[:cut]) + "..."
}

// maskTail masks the end of s when it is the start of a secret or of an
// authentication token.
func (r *Redactor) maskTail(s string) string {
	if i := schemeTail(s); i >= 0 {
		return s[:i] + Mask
	}
	if r.Empty() {
		return s
	}
	for _, sec := range r.secrets {
		for k := min(len(sec)-1, len(s)); k >= MinLen; k-- {
			if strings.HasSuffix(s, sec[:k]) {
				return s[:len(s)-k] + Mask
			}
		}
	}
	return s
}

// Writer returns a writer that redacts each Write before passing it to w.
// Redaction is per call: every omnibench writer emits whole lines or whole
// documents in one call (results lines, report tables, log lines), so a
// secret is never split across two calls. It reports len(p) written on
// success, whatever the redacted length.
func (r *Redactor) Writer(w io.Writer) io.Writer {
	if rw, ok := w.(*writer); ok && rw.r == r {
		return w // already redacted by r
	}
	return &writer{r: r, w: w}
}

type writer struct {
	r *Redactor
	w io.Writer
}

// Unwrap returns the writer redacted into (to tell whether it is a
// terminal, for example).
func (w *writer) Unwrap() io.Writer { return w.w }

func (w *writer) Write(p []byte) (int, error) {
	if _, err := w.w.Write(w.r.Bytes(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// URL is the one rule for showing a URL, whoever gave it (a flag, a
// server's redirect): the user information goes (a user name is a token as
// often as a name, https://TOKEN@host), and so do the fragment and the
// values of the query of a URL with a host (signed URLs carry tokens there);
// the keys stay, their values become "xxxxx". A value that does not parse
// as such a URL but has an '@' shows only what follows its last '@', which
// is where user information would end.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || strings.Contains(u.Opaque, "@") {
		// Unparsable, or parsed as scheme and opaque data ("user:pw@host"
		// has the scheme "user").
		if i := strings.LastIndexByte(raw, '@'); i >= 0 {
			return Mask + "@" + raw[i+1:]
		}
		return raw
	}
	hasQuery := u.Host != "" && (u.RawQuery != "" || u.Fragment != "" || u.RawFragment != "")
	if u.User == nil && !hasQuery {
		return raw
	}
	u.User = nil
	if hasQuery {
		q := u.Query()
		keys := make([]string, 0, len(q))
		for k := range q {
			keys = append(keys, url.QueryEscape(k)+"=xxxxx")
		}
		slices.Sort(keys)
		u.RawQuery = strings.Join(keys, "&")
		u.Fragment, u.RawFragment = "", ""
	}
	return u.String()
}

// FromURL returns the credentials a URL carries: its password, the
// "user:password" pair, that pair base64-encoded as an HTTP client sends it
// for Basic authentication, and the percent-encoded forms as they appear
// when the URL is printed.
func FromURL(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil
	}
	user := u.User.Username()
	pass, ok := u.User.Password()
	if !ok {
		// A bare user is a token for some services (https://TOKEN@host).
		return []string{user, url.UserPassword(user, "").String()}
	}
	pair := user + ":" + pass
	return []string{
		pass,
		pair,
		base64.StdEncoding.EncodeToString([]byte(pair)),
		url.UserPassword(user, pass).String(),
		url.QueryEscape(pass),
	}
}

// FromHeader returns the credentials a request header value carries: the
// whole value, the token after an auth scheme ("Bearer X", "Basic X") and,
// for Basic, the decoded password. Every header the user sets is taken as a
// possible credential: only the user knows which ones are.
func FromHeader(value string) []string {
	value = strings.TrimSpace(value)
	out := []string{value}
	scheme, token, ok := strings.Cut(value, " ")
	if !ok {
		return out
	}
	token = strings.TrimSpace(token)
	out = append(out, token)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(token); err == nil {
			pair := string(dec)
			out = append(out, pair)
			if _, pass, ok := strings.Cut(pair, ":"); ok {
				out = append(out, pass)
			}
		}
	}
	return out
}

// FromArgs returns the secret values of a command line: the values of
// secret-looking flags (IsSecretName: --api-key X, --hf-token=X) and of
// NAME=value environment assignments of secret-looking names (EnvAssignment).
func FromArgs(argv []string) []string {
	var out []string
	next := false
	for _, a := range argv {
		if next {
			out = append(out, a)
			next = false
			continue
		}
		if strings.HasPrefix(a, "-") {
			name, value, hasValue := strings.Cut(a, "=")
			if IsSecretName(strings.TrimLeft(name, "-")) {
				if hasValue {
					out = append(out, value)
				} else {
					next = true
				}
			}
			continue
		}
		if _, value, ok := EnvAssignment(a); ok {
			out = append(out, value)
		}
	}
	return out
}

// IsSecretName reports whether a flag or variable name looks like it holds a
// credential: one of its words ("--api-key", "HF_TOKEN") is key, token,
// secret, password, passwd, credential(s) or auth(orization). Whole words
// only: "--tokenizer" and "--max-num-batched-tokens" are not secret.
func IsSecretName(name string) bool {
	words := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	for _, w := range words {
		switch w {
		case "key", "token", "secret", "password", "passwd", "credential", "credentials", "auth", "authorization":
			return true
		}
	}
	return false
}

// EnvAssignment splits a shell-style NAME=value word whose NAME looks like a
// credential (IsSecretName), as in `env HF_TOKEN=... vllm serve`.
func EnvAssignment(word string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(word, "=")
	if !ok || !isEnvName(name) || !IsSecretName(name) {
		return "", "", false
	}
	return name, value, true
}

// isEnvName reports whether s is a shell variable name (FOO_BAR).
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// ProxyVariables are the environment variables a proxy URL is read from
// (net/http's ProxyFromEnvironment reads the first four).
func ProxyVariables() []string {
	return []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}
}

// FromEnvironment returns the credentials of the proxy URLs in the
// environment (ProxyVariables), read through getenv (os.Getenv): requests
// go through such a proxy with them, and a proxy that refuses a request
// may quote them back.
func FromEnvironment(getenv func(string) string) []string {
	var out []string
	for _, name := range ProxyVariables() {
		v := getenv(name)
		if v == "" {
			continue
		}
		if !strings.Contains(v, "://") {
			v = "http://" + v // net/http reads a bare host:port as http
		}
		out = append(out, FromURL(v)...)
	}
	return out
}
