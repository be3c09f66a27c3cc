package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// profileFlags are run's hidden profiling flags, for measuring omnibench
// itself (internal/bench/rss reads the heap profile of a long run).
type profileFlags struct {
	cpu, mem string
}

func (p *profileFlags) addFlags(f *pflag.FlagSet) {
	f.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the whole command to this file")
	f.StringVar(&p.mem, "memprofile", "", "write a heap profile to this file when the command ends")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
}

// start begins the CPU profile; stop ends it and writes the heap profile
// (after a collection, so that in-use figures are the live heap).
func (p *profileFlags) start() (stop func() error, err error) {
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, withExitCode(2, fmt.Errorf("--cpuprofile: %w", err))
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			cpu.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	return func() error {
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				return fmt.Errorf("--cpuprofile: %w", err)
			}
		}
		if p.mem == "" {
			return nil
		}
		f, err := os.Create(p.mem)
		if err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		runtime.GC()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			f.Close()
			return fmt.Errorf("--memprofile: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--memprofile: %w", err)
		}
		return nil
	}, nil
}
