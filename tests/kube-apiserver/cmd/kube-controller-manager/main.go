// The real kube-controller-manager of Kubernetes v1.37.2, built from the
// same Go modules as the test API server (the module of ../..), for the
// rollout harness (tests/rollout.rs): its Deployment, ReplicaSet,
// EndpointSlice, disruption and garbage-collector controllers decide how an
// upgrade rolls out. tests/kube-controller-manager/kube-controller-manager
// builds it.
//
// Usage: asogen-kube-controller-manager [--stdin-watch] [kube-controller-manager flags]
//
// With --stdin-watch (which must come first) it exits when its stdin
// reaches end of file: the test process holds the other end of that pipe,
// so the controllers go away with it, however it ends.
package main

import (
	"bufio"
	"io"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as the upstream binary registers them
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--stdin-watch" {
		os.Args = append(os.Args[:1], os.Args[2:]...)
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			os.Exit(0) // it keeps nothing on disk: nothing to clean up
		}()
	}
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
