package main

import (
	"runtime/debug"
	"strings"
)

// versionString describes this binary for --version, every results file
// header and every report: the version set at build time (-ldflags
// "-X main.version=..."), else the module version from the build info,
// else "dev"; then the VCS revision the build info carries.
func versionString() string {
	info, _ := debug.ReadBuildInfo()
	return describeBuild(version, info)
}

// describeBuild is versionString over given inputs: "v1.2.0", "v1.2.0
// (rev 0123456789ab)", "dev (rev 0123456789ab, modified)" or "dev". A
// local build (module version "(devel)", or the pseudo-version a build in
// a checkout gets: v0.0.0-time-revision[+dirty]) is "dev" plus its revision.
func describeBuild(ldflagsVersion string, info *debug.BuildInfo) string {
	v := ldflagsVersion
	if v == "" {
		v = "dev"
	}
	if info == nil {
		return v
	}
	var rev string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	mv := info.Main.Version
	local := mv == "" || mv == "(devel)" || strings.HasPrefix(mv, "v0.0.0-") || strings.HasSuffix(mv, "+dirty")
	if local {
		pseudo := strings.TrimSuffix(mv, "+dirty")
		modified = modified || pseudo != mv
		if i := strings.LastIndex(pseudo, "-"); rev == "" && strings.HasPrefix(pseudo, "v0.0.0-") && i >= 0 {
			rev = pseudo[i+1:]
		}
	} else if v == "dev" {
		v = mv
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var parts []string
	if rev != "" {
		parts = append(parts, "rev "+rev)
	}
	if modified {
		parts = append(parts, "modified")
	}
	if len(parts) == 0 {
		return v
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}
