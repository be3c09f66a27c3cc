package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/internal/scale/kube"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
)

func newKubeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "kube",
		Short: "Kubernetes: render the manifests that run one test as N pods",
		Example: `  omnibench kube render --shards 4 --url http://vllm-omni.default.svc:8000 -- --rate 40 -d 5m | kubectl apply -f -
  omnibench kube render --collector | kubectl apply -f -`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return withExitCode(2, cmd.Help()) },
	}
	cmd.AddCommand(newKubeRenderCmd())
	return cmd
}

type kubeRenderOptions struct {
	p         kube.Params
	collector bool
	scenario  string
	prompts   string
	startAt   string
}

// kubeManagedFlags are the run flags render sets in every pod itself.
var kubeManagedFlags = []string{"url", "scenario", "prompts", "shard", "start-at", "out", "save-scrapes", "summary", "metrics-addr", "api-key"}

func newKubeRenderCmd() *cobra.Command {
	o := &kubeRenderOptions{}
	cmd := &cobra.Command{
		Use:   "render --shards N --url URL [flags] [-- RUN FLAGS...]",
		Short: "Print the Indexed Job, ConfigMap and results volume of one sharded test, for kubectl apply -f -",
		Long: `render prints the manifests that run one omnibench test as N pods of an
Indexed Job: pod I runs "omnibench run --shard auto/N --start-at TIME" (I from
$JOB_COMPLETION_INDEX) against --url, with the scenario (and its prompts file)
from a ConfigMap, writing /results/shard-I.jsonl (and shard 0's server
snapshots) to a ReadWriteMany PVC, or to a per-pod emptyDir that the pod keeps
for --linger so "kubectl cp" can fetch it. The pods carry prometheus.io
annotations for the client-side exporter. Flags after "--" go to every pod's
"omnibench run" and are checked here as run would check them.

The agreed start is absolute in the manifests: render shortly before applying,
with --start-at far enough ahead for the pods to be scheduled and pull the
image. Node clocks must be NTP-synchronised: the start skew is as good as they
agree.`,
		Example: `  omnibench kube render --shards 4 --url http://vllm-omni.default.svc:8000 \
      --image registry.example/omnibench:v1 --start-at +2m -- --rate 40 -d 5m | kubectl apply -f -`,
		Args: usageArgs(cobra.ArbitraryArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); len(args) > 0 && dash != 0 {
				return withExitCode(2, fmt.Errorf("unexpected argument %q: give run flags after --", args[0]))
			}
			if o.collector {
				if len(args) > 0 {
					return withExitCode(2, fmt.Errorf("--collector takes no run flags"))
				}
				if err := kube.RenderCollector(cmd.OutOrStdout(), o.p); err != nil {
					return withExitCode(2, err)
				}
				return nil
			}
			if err := o.prepare(args); err != nil {
				return withExitCode(2, err)
			}
			return kube.Render(cmd.OutOrStdout(), o.p)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.p.Shards, "shards", 0, "pods (shards) of the test: completions = parallelism = N (required)")
	f.StringVar(&o.p.URL, "url", "", "the server's base URL as the pods reach it, e.g. a Service http://vllm-omni.default.svc:8000 (required)")
	f.StringVar(&o.p.Image, "image", "omnibench:latest", "container image with omnibench on its PATH (deploy/Dockerfile builds one)")
	f.StringVar(&o.scenario, "scenario", "chat-voice", "built-in scenario name or a scenario YAML file, put in the ConfigMap")
	f.StringVar(&o.prompts, "prompts", "", "prompt source (builtin:SET or a file, put in the ConfigMap); default the scenario's")
	f.StringVar(&o.startAt, "start-at", "+2m", "agreed start of the measured phase: RFC 3339, or +DURATION from now")
	f.StringVar(&o.p.Name, "name", "omnibench", "name of the Job (and prefix of the ConfigMap and PVC)")
	f.StringVar(&o.p.Namespace, "namespace", "", "namespace of the objects (default: kubectl's)")
	f.StringVar(&o.p.Results, "results", kube.ResultsPVC, "results volume: pvc (ReadWriteMany claim) or emptydir (per pod; collect with kubectl cp)")
	f.StringVar(&o.p.StorageClass, "storage-class", "", "storage class of the ReadWriteMany claim (default: the cluster's)")
	f.StringVar(&o.p.Storage, "storage", "1Gi", "size of the results claim")
	f.DurationVar(&o.p.Linger, "linger", 10*time.Minute, "with --results emptydir: how long a finished pod waits for kubectl cp")
	f.IntVar(&o.p.MetricsPort, "metrics-port", 9464, "port of each pod's client-side exporter (annotated for Prometheus)")
	f.StringVar(&o.p.CPU, "cpu", "1", "CPU request per pod")
	f.StringVar(&o.p.Memory, "memory", "512Mi", "memory request and limit per pod")
	f.DurationVar(&o.p.Deadline, "deadline", time.Hour, "the Job's active deadline: pods still running then are stopped")
	f.BoolVar(&o.collector, "collector", false, "print instead the pod that merges the results on the claim, to kubectl cp from (--name, --namespace, --image, --linger)")
	f.StringVar(&o.p.APIKeySecret, "api-key-secret", "", "Secret whose key api-key becomes $OMNIBENCH_API_KEY in the pods (never put a key in a manifest)")
	return cmd
}

// prepare reads the scenario and prompts and checks the run flags as run
// would, with this pod count, so that a bad test fails here and not in N
// pods.
func (o *kubeRenderOptions) prepare(runArgs []string) error {
	at, err := load.ParseStartAt(o.startAt, time.Now())
	if err != nil {
		return fmt.Errorf("--start-at: %w", err)
	}
	o.p.StartAt = at

	if slices.Contains(scenarios.Names(), o.scenario) {
		o.p.ScenarioYAML, err = scenarios.Source(o.scenario)
	} else {
		o.p.ScenarioYAML, err = os.ReadFile(o.scenario)
	}
	if err != nil {
		return fmt.Errorf("--scenario: %w", err)
	}
	if err := o.p.Validate(); err != nil {
		return err
	}

	// The run command itself parses the flags, so every flag run has is
	// known here and nothing else is.
	ro := &runOptions{}
	fs := newRunCmdWith(ro, nil).Flags()
	fs.SetOutput(new(strings.Builder))
	if err := fs.Parse(runArgs); err != nil {
		return fmt.Errorf("run flags after --: %w", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("run flags after --: unexpected argument %q", fs.Arg(0))
	}
	for _, name := range kubeManagedFlags {
		if fs.Changed(name) {
			hint := "render sets it in every pod"
			if name == "api-key" {
				hint = "use --api-key-secret: a key must not be in a manifest"
			} else if slices.Contains([]string{"url", "scenario", "prompts", "start-at"}, name) {
				hint = "give it to render, before --"
			}
			return fmt.Errorf("run flag --%s after --: %s", name, hint)
		}
	}
	// The pods get --url, --scenario and --prompts from render: checked
	// here as run checks them.
	for name, value := range map[string]string{"url": o.p.URL, "scenario": o.scenario} {
		if err := fs.Set(name, value); err != nil {
			return err
		}
	}
	if o.prompts != "" {
		if err := fs.Set("prompts", o.prompts); err != nil {
			return err
		}
	}
	cfg, sc, _, err := ro.checkFlags(fs)
	if err != nil {
		return err
	}
	cfg.Load.Shard = load.Shard{Index: 0, Count: o.p.Shards}
	if err := cfg.Load.Validate(); err != nil {
		return fmt.Errorf("--shards %d: %w", o.p.Shards, err)
	}
	o.p.RunArgs = runArgs

	src := sc.PromptSpec.Source
	switch {
	case strings.HasPrefix(src, "builtin:"):
		if o.prompts != "" {
			o.p.RunArgs = append([]string{"--prompts", src}, o.p.RunArgs...)
		}
	case src != "":
		// A prompts file is on this machine, not in the pods: it goes in
		// the ConfigMap, under its base name (the extension says JSONL or
		// text).
		if o.p.Prompts, err = os.ReadFile(src); err != nil {
			return fmt.Errorf("prompts: %w", err)
		}
		o.p.PromptsName = "prompts-" + filepath.Base(src)
	}
	return nil
}
