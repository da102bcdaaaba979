package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); otherwise
// the module version or VCS revision from the build info is shown.
var version = ""

func versionString() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if v == "" && ok {
		v = info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && (v == "" || v == "(devel)") {
				v = "devel-" + s.Value
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	goVersion := "unknown"
	if ok {
		goVersion = info.GoVersion
	}
	return fmt.Sprintf("switchyard %s (%s)", v, goVersion)
}

func runVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	fmt.Fprintln(stdout, versionString())
	return nil
}
