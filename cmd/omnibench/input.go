package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/net/http/httpguts"
)

// checkWireInput refuses, before any command runs, command-line values that
// cannot go on the wire: a request header with a bad name or control bytes
// in its value, and a URL (any flag named "url" or "*-url", --push, or a
// URL argument) with control bytes. Left to the request, such input failed
// every request at run time (exit 1) or ended up echoed in an error, line
// breaks and all. The errors name the flag and, for a header, its name:
// never the value, which may be a secret, nor the raw bytes of a URL.
func checkWireInput(cmd *cobra.Command, args []string) error {
	var errs []error
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		for _, v := range flagElements(fl) {
			switch {
			case fl.Name == "header":
				if _, err := parseHeader(v); err != nil {
					errs = append(errs, err)
				}
			case isURLFlag(fl.Name) && hasControlByte(v):
				errs = append(errs, fmt.Errorf("--%s: the URL contains control characters (a line break, tab or other byte below 0x20, or 0x7f); they are not shown", fl.Name))
			}
		}
	})
	for i, a := range args {
		if strings.Contains(a, "://") && hasControlByte(a) {
			errs = append(errs, fmt.Errorf("argument %d: the URL contains control characters (a line break, tab or other byte below 0x20, or 0x7f); they are not shown", i+1))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return withExitCode(2, err)
	}
	return nil
}

func isURLFlag(name string) bool {
	return name == "url" || name == "push" || strings.HasSuffix(name, "-url")
}

func hasControlByte(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// header is one -H/--header value split into its name and value.
type header struct{ name, value string }

// parseHeader splits "Name: value" and checks both halves as HTTP allows
// them (a token for the name; no control bytes but tab in the value). The
// error names the header, never its value.
func parseHeader(s string) (header, error) {
	name, value, ok := strings.Cut(s, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || name == "":
		if hasControlByte(s) {
			return header{}, errors.New(`--header: want "Name: value" (the value given is not shown)`)
		}
		return header{}, fmt.Errorf("--header %q: want \"Name: value\"", s)
	case !httpguts.ValidHeaderFieldName(name):
		return header{}, fmt.Errorf("--header %q: not a valid HTTP header name (letters, digits and !#$%%&'*+-.^_`|~ only)", name)
	case !httpguts.ValidHeaderFieldValue(value):
		return header{}, fmt.Errorf("--header %s: the value contains control characters (only tab is allowed); it is not shown", name)
	}
	return header{name: name, value: value}, nil
}
