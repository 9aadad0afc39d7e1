// The real kube-scheduler of Kubernetes v1.37.2, built from the same Go
// modules as the test API server (the module of ../..), for the HA tests
// (tests/ha.rs): it decides where each pod of an install goes, following
// the pods' topology spread, affinity and node selectors, so the spread
// asogen renders is exercised, not assumed.
// tests/kube-scheduler/kube-scheduler builds it.
//
// Usage: asogen-kube-scheduler [--stdin-watch] [kube-scheduler flags]
//
// With --stdin-watch (which must come first) it exits when its stdin
// reaches end of file: the test process holds the other end of that pipe,
// so the scheduler goes away with it, however it ends.
package main

import (
	"bufio"
	"io"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as the upstream binary registers them
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--stdin-watch" {
		os.Args = append(os.Args[:1], os.Args[2:]...)
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			os.Exit(0) // it keeps nothing on disk: nothing to clean up
		}()
	}
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
