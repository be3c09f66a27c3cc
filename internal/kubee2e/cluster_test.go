package kubee2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The names start.sh gives the images it imports (test/kube/env.sh).
const (
	image      = "omnibench.local/omnibench:e2e"
	pauseImage = "omnibench.local/pause:e2e"
)

// busyboxApplets are the commands the image's busybox provides under /bin:
// the shell of the emptydir and collector pods, test for the collector's
// readiness probe, and tar for kubectl cp.
var busyboxApplets = []string{"sh", "test", "sleep", "tar", "cat", "ls", "rm", "echo", "mkdir"}

// cluster is the one-node cluster of test/kube and the binaries that run
// against it.
type cluster struct {
	root      string // the repository
	dir       string // $KUBE_E2E_DIR: the Kubernetes binaries and the cluster's state
	omnibench string // this machine's omnibench, the one in the image
}

// startCluster builds omnibench and the pause program, writes their image
// archives, starts the cluster with them (teardown registered first, so a
// failed start is cleaned too) and logs how long each step took.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{root: root, dir: os.Getenv("KUBE_E2E_DIR")}
	if c.dir == "" {
		c.dir = "/var/tmp/omnibench-kube"
	}
	for _, need := range []string{filepath.Join(c.dir, "bin", "kubelet"), "/bin/busybox"} {
		if _, err := os.Stat(need); err != nil {
			t.Fatalf("%v: run test/kube/install.sh and test/kube/build.sh first", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	began := time.Now()
	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", bin+"/", "./cmd/omnibench", "./internal/tools/pause", "./internal/tools/imagearchive")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c.omnibench = filepath.Join(bin, "omnibench")
	archive := filepath.Join(bin, "imagearchive")
	pauseTar, imageTar := filepath.Join(bin, "pause.tar"), filepath.Join(bin, "omnibench.tar")
	c.run(t, ctx, archive, "-o", pauseTar, "-name", pauseImage, "-add", filepath.Join(bin, "pause")+":/pause", "-entrypoint", "/pause")
	args := []string{"-o", imageTar, "-name", image, "-entrypoint", "omnibench",
		"-add", c.omnibench + ":/usr/local/bin/omnibench", "-add", "/bin/busybox:/bin/busybox"}
	for _, applet := range busyboxApplets {
		args = append(args, "-link", "/bin/"+applet+":busybox")
	}
	c.run(t, ctx, archive, args...)
	built := time.Now()

	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if out, err := exec.CommandContext(ctx, filepath.Join(root, "test", "kube", "teardown.sh")).CombinedOutput(); err != nil {
			t.Errorf("teardown.sh: %v\n%s", err, out)
		}
	})
	c.run(t, ctx, filepath.Join(root, "test", "kube", "start.sh"), pauseTar, imageTar)
	t.Logf("images built in %v; cluster started in %v", built.Sub(began).Round(time.Millisecond), time.Since(built).Round(time.Millisecond))
	return c
}

// env is the environment of the cluster's commands.
func (c *cluster) env() []string {
	return append(os.Environ(), "KUBE_E2E_DIR="+c.dir, "KUBECONFIG="+filepath.Join(c.dir, "run", "admin.kubeconfig"))
}

// run runs a command against the cluster and fails the test unless it
// exits 0; it returns the standard output.
func (c *cluster) run(t *testing.T, ctx context.Context, name string, args ...string) []byte {
	t.Helper()
	out, err := c.output(ctx, nil, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// output runs a command with stdin, returning its standard output, or an
// error that holds both outputs.
func (c *cluster) output(ctx context.Context, stdin []byte, name string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = c.env(), &stdout, &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s%s", filepath.Base(name), strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), nil
}

// kubectl runs the cluster's kubectl.
func (c *cluster) kubectl(t *testing.T, ctx context.Context, stdin []byte, args ...string) []byte {
	t.Helper()
	out, err := c.output(ctx, stdin, filepath.Join(c.dir, "bin", "kubectl"), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// apply applies manifests as a user would, and as strictly as the API
// server can: server-side, every unknown or duplicated field refused.
func (c *cluster) apply(t *testing.T, ctx context.Context, manifests []byte) {
	t.Helper()
	c.kubectl(t, ctx, manifests, "apply", "--server-side", "--validate=strict", "-f", "-")
}

// watch follows `kubectl get ARGS --watch -o json` and calls done with each
// object as it changes until done says it is enough; the watch is stopped
// then, or at ctx's deadline (an error naming what was awaited).
func (c *cluster) watch(ctx context.Context, what string, done func(json.RawMessage) (bool, error), args ...string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.dir, "bin", "kubectl"), append(append([]string{"get"}, args...), "--watch", "-o", "json")...)
	var stderr bytes.Buffer
	cmd.Env, cmd.Stderr = c.env(), &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Wait()
	defer cancel()
	dec := json.NewDecoder(stdout)
	for {
		var obj json.RawMessage
		if err := dec.Decode(&obj); err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) {
				return fmt.Errorf("waiting for %s: %w (kubectl: %s)", what, context.Cause(ctx), stderr.Bytes())
			}
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok, err := done(obj); err != nil || ok {
			return err
		}
	}
}
