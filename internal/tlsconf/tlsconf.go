// Package tlsconf is the TLS client configuration omnibench's requests share
// (the streams, the WebSocket handshakes, the /metrics scrapes and the
// model list): the certificate authorities of --ca-file and the skipped
// verification of --insecure, and the standard-library transport built on
// them for the requests that do not go through package http1.
//
// Without either flag the configuration is nil: certificates are verified
// against the system's roots, which Go reads from the usual system files
// or from the files named by SSL_CERT_FILE and SSL_CERT_DIR.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// MaxCAFileBytes caps the --ca-file read: a bundle of every public
// authority is about 250 KiB.
const MaxCAFileBytes = 16 << 20

// InsecureNote is said wherever a run's figures are shown when
// certificates were not verified.
const InsecureNote = "TLS certificates were NOT verified (--insecure): the server's identity is unproven and the traffic could have been read or changed on the way"

// Options are the TLS flags.
type Options struct {
	// CAFile is a PEM bundle of the certificate authorities to trust
	// instead of the system's (as curl --cacert); "" trusts the system's.
	CAFile string
	// Insecure skips the verification of the server's certificate (as
	// curl -k and k6's insecureSkipTLSVerify).
	Insecure bool
}

// Config returns the TLS configuration of o, or nil when o asks for the
// defaults. Errors name the file.
func (o Options) Config() (*tls.Config, error) {
	switch {
	case o.Insecure && o.CAFile != "":
		return nil, errors.New("--insecure skips certificate verification, so --ca-file would not be used: give one")
	case o.Insecure:
		// The user asked for it; every report of the run says so.
		return &tls.Config{InsecureSkipVerify: true}, nil
	case o.CAFile == "":
		return nil, nil
	}
	pool, err := readCAFile(o.CAFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{RootCAs: pool}, nil
}

// readCAFile reads a PEM bundle into a pool, refusing a file with no
// certificate (a key or a DER file given by mistake would otherwise leave
// an empty pool that trusts nothing, and every request would fail).
func readCAFile(path string) (*x509.CertPool, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	if fi.Size() > MaxCAFileBytes {
		return nil, fmt.Errorf("--ca-file %s: %d bytes, more than a certificate bundle (%d at most)", path, fi.Size(), MaxCAFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("--ca-file %s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(cert)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate (\"-----BEGIN CERTIFICATE-----\") in the file", path)
	}
	return pool, nil
}

// Transport returns a transport like net/http's default one (proxies from
// the environment, its timeouts) that uses c for TLS; c nil keeps the
// defaults. HTTP/2 is not offered: every server omnibench talks to is
// measured over HTTP/1.1.
func Transport(c *tls.Config) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = false
	if c != nil {
		tr.TLSClientConfig = c.Clone()
	}
	return tr
}

// Client returns the client of the occasional requests (the /metrics
// scrapes, the model list) for c: nil when c is nil, so that callers keep
// net/http's default client; otherwise one over Transport(c) that keeps no
// idle connection, so that dropping it leaks nothing.
func Client(c *tls.Config) *http.Client {
	if c == nil {
		return nil
	}
	tr := Transport(c)
	tr.DisableKeepAlives = true
	return &http.Client{Transport: tr}
}
