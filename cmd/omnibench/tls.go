package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/tlsconf"
)

// tlsFlags are --ca-file and --insecure, on every command that talks to a
// server: run, sweep, capacity and ab (through runOptions), scrape, diff
// and check.
type tlsFlags struct{ opts tlsconf.Options }

func (t *tlsFlags) addFlags(f *pflag.FlagSet) {
	f.StringVar(&t.opts.CAFile, "ca-file", "", "trust the certificate authorities of this PEM `FILE` instead of the system's (like curl --cacert); the system's come from the OS or $SSL_CERT_FILE")
	f.BoolVar(&t.opts.Insecure, "insecure", false, "do not verify the server's TLS certificate (like curl -k); every report says so")
}

// config is the TLS configuration of the flags (nil for the defaults); a
// bad --ca-file is unusable input.
func (t *tlsFlags) config() (*tls.Config, error) {
	c, err := t.opts.Config()
	if err != nil {
		return nil, withExitCode(2, err)
	}
	return c, nil
}

// httpClient is the client of a command's scrapes (nil for net/http's
// default), after a warning on stderr when certificates go unverified.
func (t *tlsFlags) httpClient(stderr io.Writer) (*http.Client, error) {
	c, err := t.config()
	if err != nil {
		return nil, err
	}
	if t.opts.Insecure {
		fmt.Fprintln(stderr, "omnibench: warning:", tlsconf.InsecureNote)
	}
	return tlsconf.Client(c), nil
}
