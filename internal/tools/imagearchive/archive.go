package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Image is what goes into the archive.
type Image struct {
	Name       string // REPOSITORY:TAG, the name the importer gives it
	Entrypoint []string
	Env        []string
	Files      []File
}

// File is one regular file or symbolic link of the image's only layer; its
// parent directories are added as needed.
type File struct {
	Path string // absolute, inside the image
	Mode fs.FileMode
	Data []byte
	Link string // a symbolic link to Link instead of a regular file
}

// epoch is every entry's time stamp: the same inputs, the same digests.
func epoch() time.Time { return time.Unix(0, 0) }

// Write writes img as a Docker archive: the layer tar, the image config
// naming the layer by its digest (the diff ID), and manifest.json tying the
// config and layer to the image's name.
func Write(w io.Writer, img Image) error {
	if tag := img.Name[strings.LastIndex(img.Name, "/")+1:]; !strings.Contains(tag, ":") {
		return fmt.Errorf("image name %q: want REPOSITORY:TAG", img.Name)
	}
	layer, err := layerTar(img.Files)
	if err != nil {
		return err
	}
	layerDigest := sha256.Sum256(layer)
	layerHex := hex.EncodeToString(layerDigest[:])
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      epoch().UTC().Format(time.RFC3339),
		"config":       map[string]any{"Entrypoint": img.Entrypoint, "Env": img.Env},
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerHex}},
	})
	if err != nil {
		return fmt.Errorf("image config: %w", err)
	}
	configDigest := sha256.Sum256(config)
	configName := hex.EncodeToString(configDigest[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{
		"Config":   configName,
		"RepoTags": []string{img.Name},
		"Layers":   []string{layerHex + "/layer.tar"},
	}})
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}

	tw := tar.NewWriter(w)
	for _, e := range []struct {
		name string
		data []byte
	}{{layerHex + "/layer.tar", layer}, {configName, config}, {"manifest.json", manifest}} {
		if err := writeFile(tw, e.name, 0o644, e.data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// layerTar is the layer: the files, each after its parent directories.
func layerTar(files []File) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	for _, f := range sorted {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path {
			return nil, fmt.Errorf("image path %q: want a clean absolute path", f.Path)
		}
		name := strings.TrimPrefix(f.Path, "/")
		if err := addParents(tw, dirs, path.Dir(name)); err != nil {
			return nil, err
		}
		var err error
		if f.Link != "" {
			err = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: f.Link, Mode: 0o777, ModTime: epoch(), Format: tar.FormatPAX})
		} else {
			err = writeFile(tw, name, int64(f.Mode.Perm()), f.Data)
		}
		if err != nil {
			return nil, fmt.Errorf("layer entry %s: %w", f.Path, err)
		}
	}
	if err := addParents(tw, dirs, "tmp"); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// addParents adds dir and its parents that are not in the layer yet; /tmp
// is world-writable with the sticky bit, as on any system.
func addParents(tw *tar.Writer, done map[string]bool, dir string) error {
	if dir == "." || dir == "/" || done[dir] {
		return nil
	}
	if err := addParents(tw, done, path.Dir(dir)); err != nil {
		return err
	}
	done[dir] = true
	mode := int64(0o755)
	if dir == "tmp" {
		mode = 0o1777
	}
	return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: mode, ModTime: epoch(), Format: tar.FormatPAX})
}

func writeFile(tw *tar.Writer, name string, mode int64, data []byte) error {
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch(), Format: tar.FormatPAX}); err != nil {
		return err
	}
	_, err := tw.Write(data)
	return err
}
