package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readTar returns a tar stream's entries by name, in order.
func readTar(t *testing.T, data []byte) (map[string]*tar.Header, map[string][]byte, []string) {
	t.Helper()
	hdrs, bodies := map[string]*tar.Header{}, map[string][]byte{}
	var order []string
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return hdrs, bodies, order
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hdrs[h.Name], bodies[h.Name] = h, body
		order = append(order, h.Name)
	}
}

// The archive is what `docker save` writes and `ctr images import` reads:
// manifest.json names the config and the layer, the config's diff ID is
// the layer's digest, and the layer holds the files with their modes, the
// links, and every parent directory before its children.
func TestWriteDockerArchive(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	var stderr bytes.Buffer
	args := []string{"-o", out, "-name", "omnibench.local/tool:e2e", "-add", bin + ":/usr/local/bin/tool",
		"-link", "/bin/sh:busybox", "-entrypoint", "tool serve"}
	if err := run(args, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	archive, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	_, files, _ := readTar(t, archive)
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || len(manifest[0].Layers) != 1 || strings.Join(manifest[0].RepoTags, ",") != "omnibench.local/tool:e2e" {
		t.Fatalf("manifest.json: %s", files["manifest.json"])
	}
	config := files[manifest[0].Config]
	if sum := sha256.Sum256(config); manifest[0].Config != hex.EncodeToString(sum[:])+".json" {
		t.Errorf("config %s is not named by its digest", manifest[0].Config)
	}
	var cfg struct {
		OS     string `json:"os"`
		Config struct {
			Entrypoint []string
			Env        []string
		} `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(config, &cfg); err != nil {
		t.Fatal(err)
	}
	layer := files[manifest[0].Layers[0]]
	sum := sha256.Sum256(layer)
	if len(cfg.RootFS.DiffIDs) != 1 || cfg.RootFS.DiffIDs[0] != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Errorf("diff IDs %v, the layer's digest sha256:%x", cfg.RootFS.DiffIDs, sum)
	}
	if cfg.OS != "linux" || strings.Join(cfg.Config.Entrypoint, " ") != "tool serve" || strings.Join(cfg.Config.Env, ",") != "PATH=/usr/local/bin:/bin" {
		t.Errorf("config %s", config)
	}

	hdrs, bodies, order := readTar(t, layer)
	if h := hdrs["usr/local/bin/tool"]; h == nil || h.Mode != 0o755 || string(bodies["usr/local/bin/tool"]) != "#!binary" {
		t.Errorf("the file: %+v", h)
	}
	if h := hdrs["bin/sh"]; h == nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "busybox" {
		t.Errorf("the link: %+v", h)
	}
	if h := hdrs["tmp/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("/tmp: %+v", h)
	}
	seen := map[string]bool{}
	for _, name := range order {
		if parent := filepath.Dir(strings.TrimSuffix(name, "/")); parent != "." && !seen[parent+"/"] {
			t.Errorf("%s comes before its directory %s/ (entries %v)", name, parent, order)
		}
		seen[name] = true
	}

	// The same inputs give the same bytes, so the same image digest.
	again := filepath.Join(dir, "again.tar")
	if err := run(append(args[2:], "-o", again), &stderr); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(again); !bytes.Equal(b, archive) {
		t.Error("two archives of the same inputs differ")
	}
}

func TestWriteRefusesUnusableInput(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-name", "x:y"},
		{"-o", filepath.Join(dir, "a.tar"), "-name", "untagged"},
		{"-o", filepath.Join(dir, "b.tar"), "-name", "x:y", "-add", filepath.Join(dir, "missing") + ":/m"},
		{"-o", filepath.Join(dir, "c.tar"), "-name", "x:y", "-link", "relative/path:target"},
		{"-o", filepath.Join(dir, "d.tar"), "-name", "x:y", "-add", "nocolon"},
	} {
		if err := run(args, io.Discard); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
