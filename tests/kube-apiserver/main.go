// A real Kubernetes API server on 127.0.0.1 for asogen's tests: etcd embedded
// and kube-apiserver run in this one process, started through the same cobra
// command as the upstream kube-apiserver binary, so storage, defaulting,
// validation, admission and server-side apply are the real ones. There is no
// controller-manager, scheduler or kubelet: objects are stored but nothing
// reconciles them.
//
// Usage: asogen-kube-apiserver [--dir DIR] [--stdin-watch] [-- kube-apiserver flags]
//
// The program keeps its data (etcd, certificates) in a private temp folder and
// removes it when it stops. When /readyz answers 200 it writes a kubeconfig
// (DIR/kubeconfig, or one in the temp folder without --dir; written by rename,
// so its presence means "ready") and prints "ready KUBECONFIG-PATH" on stdout.
// It stops on SIGTERM or SIGINT, and with --stdin-watch also when its stdin
// reaches end of file: a test process holds the other end of that pipe, so the
// server goes away with the process that started it, however that ends.
package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"go.etcd.io/etcd/api/v3/version"
	"go.etcd.io/etcd/server/v3/embed"

	_ "k8s.io/component-base/metrics/prometheus/clientgo" // as the upstream main does
	_ "k8s.io/component-base/metrics/prometheus/version"
	kversion "k8s.io/component-base/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	dir := flag.String("dir", "", "folder for the kubeconfig (default: inside the private temp folder)")
	watch := flag.Bool("stdin-watch", false, "stop when stdin reaches end of file")
	flag.Parse()
	os.Exit(run(*dir, *watch, flag.Args()))
}

func run(dir string, watch bool, extra []string) int {
	// First: the command installs the signal handler that stops the API
	// server cleanly (and so lets the deferred clean-up below run).
	cmd := app.NewAPIServerCommand()
	tmp, err := os.MkdirTemp("", "asogen-kube-apiserver-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(tmp)
	if dir == "" {
		dir = tmp
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail("%v", err)
	} else {
		// lets the wrapper script clean up after a hard kill
		_ = os.WriteFile(filepath.Join(dir, "tmpdir"), []byte(tmp+"\n"), 0o644)
	}

	// The API server's own signal handler (SetupSignalContext) stops it on
	// SIGTERM/SIGINT; stdin EOF is turned into a SIGTERM to ourselves so both
	// ways take the same clean path.
	// A test process that reads our stderr may be gone before we finish
	// shutting down: a log line must then fail quietly, not kill us (Go
	// exits on SIGPIPE from fds 1 and 2) before the temp folder is removed.
	signal.Ignore(syscall.SIGPIPE)
	if watch {
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
		}()
	}

	// A clean stop waits for requests in flight; a client that keeps a
	// watch open (kubectl waiting for a deletion no controller will finish)
	// could hold it for ever, so after 15 s we clean up and exit anyway.
	stopping := make(chan os.Signal, 1)
	signal.Notify(stopping, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stopping
		time.Sleep(15 * time.Second)
		fmt.Fprintln(os.Stderr, "asogen-kube-apiserver: no clean stop in 15 s; exiting")
		if dir != tmp {
			_ = os.Remove(filepath.Join(dir, "kubeconfig"))
			_ = os.Remove(filepath.Join(dir, "tmpdir"))
		}
		_ = os.RemoveAll(tmp)
		os.Exit(1)
	}()

	etcdURL, stopEtcd, err := startEtcd(filepath.Join(tmp, "etcd"))
	if err != nil {
		return fail("etcd: %v", err)
	}
	defer stopEtcd()

	pki := filepath.Join(tmp, "pki")
	creds, err := writeCredentials(pki)
	if err != nil {
		return fail("credentials: %v", err)
	}

	port, err := freePort()
	if err != nil {
		return fail("%v", err)
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port),
		// a loopback address may not be published in the "kubernetes" Endpoints
		"--endpoint-reconciler-type=none",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--cert-dir=" + pki,
		"--tls-cert-file=" + filepath.Join(pki, "serving.crt"),
		"--tls-private-key-file=" + filepath.Join(pki, "serving.key"),
		"--client-ca-file=" + filepath.Join(pki, "ca.crt"),
		"--token-auth-file=" + filepath.Join(pki, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + filepath.Join(pki, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(pki, "sa.key"),
		"--profiling=false",
	}
	cmd.SetArgs(append(args, extra...))
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	server := "https://127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(server, creds, done); err != nil {
		return fail("%v", err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(kubeconfig, server, creds); err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(os.Stderr, "asogen-kube-apiserver: kube-apiserver %s (etcd %s) ready at %s\n",
		kversion.Get().GitVersion, version.Version, server)
	fmt.Printf("ready %s\n", kubeconfig)

	err = <-done
	if dir != tmp {
		_ = os.Remove(kubeconfig)
		_ = os.Remove(filepath.Join(dir, "tmpdir"))
	}
	if err != nil {
		return fail("kube-apiserver: %v", err)
	}
	return 0
}

func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "asogen-kube-apiserver: "+format+"\n", a...)
	return 1
}

// startEtcd runs a single-member etcd on free loopback ports. fsync is off:
// the data is thrown away when the server stops.
func startEtcd(dataDir string) (string, func(), error) {
	client, err := freePort()
	if err != nil {
		return "", nil, err
	}
	peer, err := freePort()
	if err != nil {
		return "", nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "asogen-test"
	cfg.Dir = dataDir
	cu := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(client)}
	pu := url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(peer)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{cu}, []url.URL{cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{pu}, []url.URL{pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.Logger, cfg.LogLevel, cfg.LogOutputs = "zap", "error", []string{"stderr"}
	cfg.UnsafeNoFsync = true
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return "", nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		return "", nil, errors.New("not ready after 60 s")
	}
	return cu.String(), e.Close, nil
}

// freePort asks the kernel for a free loopback port. It is released before
// use, so another process could take it in between; with ports picked at
// random from the ephemeral range that is unlikely.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type credentials struct {
	ca    *x509.Certificate
	caPEM []byte
	token string
}

// writeCredentials writes into dir a CA, a serving certificate for
// 127.0.0.1/localhost signed by it, a service-account signing key and a
// token file with one admin user in system:masters.
func writeCredentials(dir string) (*credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "asogen-test-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	saDER, err := x509.MarshalECPrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(tok)
	files := []struct {
		name string
		data []byte
	}{
		{"ca.crt", pemBlock("CERTIFICATE", caDER)},
		{"serving.crt", pemBlock("CERTIFICATE", der)},
		{"serving.key", pemBlock("EC PRIVATE KEY", keyDER)},
		{"sa.key", pemBlock("EC PRIVATE KEY", saDER)},
		{"tokens.csv", []byte(token + `,admin,admin,"system:masters"` + "\n")},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o600); err != nil {
			return nil, err
		}
	}
	return &credentials{ca: ca, caPEM: pemBlock("CERTIFICATE", caDER), token: token}, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// waitReady polls /readyz as the admin until it answers 200, for at most
// three minutes, or until the API server command returns (bad flags...).
func waitReady(server string, c *credentials, done chan error) error {
	pool := x509.NewCertPool()
	pool.AddCert(c.ca)
	client := &http.Client{
		Timeout:   5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			return fmt.Errorf("kube-apiserver exited before it was ready: %v", err)
		default:
		}
		req, err := http.NewRequest(http.MethodGet, server+"/readyz", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("kube-apiserver was not ready after 3 minutes")
}

func writeKubeconfig(path, server string, c *credentials) error {
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: local
  context:
    cluster: local
    user: admin
    namespace: default
current-context: local
`, server, base64.StdEncoding.EncodeToString(c.caPEM), c.token)
	if err := os.WriteFile(path+".tmp", []byte(kc), 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
