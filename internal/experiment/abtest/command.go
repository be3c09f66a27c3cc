package abtest

import (
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/secret"
)

// PortPlaceholder is replaced in every argument of a server command by the
// loopback port abtest picked for the server.
const PortPlaceholder = "{port}"

// SplitCommand splits a command line into arguments the way a POSIX shell
// splits words, without running a shell: blanks separate words; single
// quotes keep everything literally; double quotes keep everything except
// that a backslash escapes " \ $ and `; outside quotes a backslash escapes
// the next character. Nothing is expanded: no variables, globs, pipes or
// redirections. An empty word needs quotes (""). The error names the byte
// offset of an unterminated quote or trailing backslash.
func SplitCommand(s string) ([]string, error) {
	var (
		args    []string
		cur     strings.Builder
		inWord  bool
		quote   byte // 0, '\'' or '"'
		quoteAt int
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch quote {
		case '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
			continue
		case '"':
			switch {
			case c == '"':
				quote = 0
			case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`", s[i+1]) >= 0:
				i++
				cur.WriteByte(s[i])
			default:
				cur.WriteByte(c)
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case '\'', '"':
			quote, quoteAt, inWord = c, i, true
		case '\\':
			if i+1 == len(s) {
				return nil, fmt.Errorf("command %q: trailing backslash at byte %d", s, i)
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("command %q: unterminated %c quote opened at byte %d", s, quote, quoteAt)
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

// substitutePort returns argv with every PortPlaceholder replaced by port.
func substitutePort(argv []string, port string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, PortPlaceholder, port)
	}
	return out
}

// hasPlaceholder reports whether any argument contains PortPlaceholder.
func hasPlaceholder(argv []string) bool {
	for _, a := range argv {
		if strings.Contains(a, PortPlaceholder) {
			return true
		}
	}
	return false
}

// isSecretFlag reports whether a flag name holds a credential (the rule
// every output uses: secret.IsSecretName).
func isSecretFlag(name string) bool { return secret.IsSecretName(strings.TrimLeft(name, "-")) }

// RedactArgs returns argv with the values of secret-looking flags
// ("--api-key X", "--hf-token=X": a flag with the word key, token, secret,
// password, credential or auth in its name) replaced by "[redacted]", for logs, reports
// and results headers. A server command such as `vllm serve --api-key ...`
// must not leak its key into a results file.
func RedactArgs(argv []string) []string {
	out := make([]string, len(argv))
	redactNext := false
	for i, a := range argv {
		switch {
		case redactNext:
			out[i] = "[redacted]"
			redactNext = false
		case strings.HasPrefix(a, "-"):
			name, _, hasValue := strings.Cut(a, "=")
			switch {
			case !isSecretFlag(name):
				out[i] = a
			case hasValue:
				out[i] = name + "=[redacted]"
			default:
				out[i] = a
				redactNext = true
			}
		default:
			if name, _, ok := secret.EnvAssignment(a); ok {
				out[i] = name + "=" + secret.Mask // env HF_TOKEN=... vllm serve
			} else {
				out[i] = a
			}
		}
	}
	return out
}

// JoinArgs formats argv for display: arguments with blanks or quotes are
// single-quoted so that SplitCommand reads the result back as argv.
func JoinArgs(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n\r'\"\\$`") {
			parts[i] = a
			continue
		}
		parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(parts, " ")
}
