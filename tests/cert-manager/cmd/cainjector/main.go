// cert-manager's CA injector for the rollout harness's real mode: the
// injection code of cert-manager v1.21.2's root module
// (pkg/controller/cainjector, RegisterAllInjectors), the code cert-manager's
// cainjector binary runs, over a controller-runtime manager of ours. The
// module proxy serves the root module but not the nested module that holds
// the binary's main package, so this main stands in for that one: it
// injects the CA of the Certificates that CRDs and webhook configurations
// name in cert-manager.io/inject-ca-from, again each time one is written
// without it (ASO's manager writes its CRDs whole).
//
//	cainjector [--stdin-watch] --kubeconfig FILE
//
// With --stdin-watch (which must come first) it exits when its stdin
// reaches end of file: the test process holds the other end of that pipe,
// so the injector goes away with it, however it ends.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "--stdin-watch" {
		os.Args = append(os.Args[:1], os.Args[2:]...)
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			os.Exit(0) // it keeps nothing on disk: nothing to clean up
		}()
	}
	// a flag set of its own: controller-runtime registers --kubeconfig
	// on the global one
	flags := flag.NewFlagSet("cainjector", flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "the API server's kubeconfig")
	_ = flags.Parse(os.Args[1:])
	if err := run(*kubeconfig); err != nil {
		fmt.Fprintf(os.Stderr, "cainjector: %v\n", err)
		os.Exit(1)
	}
}

func run(kubeconfig string) error {
	ctrl.SetLogger(klog.NewKlogr()) // its log goes to stderr, which the tests keep
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.UserAgent = "cert-manager-cainjector"
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiext.AddToScheme, cmapi.AddToScheme} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		// Secrets are read, not cached (the injector watches only their
		// metadata), as cert-manager's own cainjector configures it.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		return err
	}
	ctx := ctrl.SetupSignalHandler()
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			"customresourcedefinition":       true,
			"mutatingwebhookconfiguration":   true,
			"validatingwebhookconfiguration": true,
		},
	})
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}
