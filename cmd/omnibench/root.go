package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd(version string) *cobra.Command {
	root := &cobra.Command{
		Use:   "omnibench",
		Short: "Benchmark streaming speech/omni servers and validate their Prometheus metrics",
		Long: `omnibench fires streaming chat and speech requests at a vLLM-Omni (or any
OpenAI-compatible) server, timestamps every audio chunk, computes TTFP, RTF and
playback continuity, scrapes /metrics before and after, and compares what the
server says with what the client measured. Without --url it runs against its
own embedded simulator.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
	// Subcommands register here, one constructor per command file.
	)
	return root
}
