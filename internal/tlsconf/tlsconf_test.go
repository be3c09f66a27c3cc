package tlsconf

import (
	"crypto/x509"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfig: no flag is nil (the system's roots), --insecure skips
// verification, --ca-file trusts the bundle's certificates only and skips
// other PEM blocks, and a file with none, a missing file or both flags are
// refused naming the flag.
func TestConfig(t *testing.T) {
	if c, err := (Options{}).Config(); c != nil || err != nil {
		t.Errorf("no flags: %v, %v; want nil, nil", c, err)
	}
	if c, err := (Options{Insecure: true}).Config(); err != nil || !c.InsecureSkipVerify {
		t.Errorf("--insecure: %+v, %v", c, err)
	}
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	dir := t.TempDir()
	bundle := append(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})...)
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c, err := (Options{CAFile: write("ca.pem", bundle)}).Config()
	if err != nil || c.RootCAs == nil || c.InsecureSkipVerify {
		t.Fatalf("--ca-file: %+v, %v", c, err)
	}
	if _, err := srv.Certificate().Verify(x509.VerifyOptions{Roots: c.RootCAs}); err != nil {
		t.Errorf("the bundle's certificate does not verify against the pool: %v", err)
	}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{CAFile: write("key.pem", bundle[:strings.Index(string(bundle), "-----BEGIN CERTIFICATE")])}, "no PEM certificate"},
		{Options{CAFile: write("bad.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}))}, "certificate 1"},
		{Options{CAFile: filepath.Join(dir, "missing.pem")}, "--ca-file"},
		{Options{CAFile: "x", Insecure: true}, "give one"},
	} {
		if _, err := tc.opts.Config(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.opts, err, tc.want)
		}
	}
}
