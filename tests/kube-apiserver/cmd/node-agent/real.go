// The real mode (--manager): every pod of the namespace runs ASO's real
// manager (tests/aso-manager) as a kubelet would run its container, and
// the agent plays what else a cluster gives it:
//   - the kubelet: the container's args and env (literal, Secret,
//     ConfigMap and field references resolved), its Secret and projected
//     service-account volumes and the service-account files at their
//     mount paths, the image's CRD files as /crds (the folder of the
//     image's tag under --crds), a sandbox per start (netns.go); the
//     pod's startup, liveness and readiness probes as the kubelet runs
//     them (HTTP GET from inside the pod's network namespace; a failed
//     startup or liveness probe restarts the container); a container that
//     exits restarts with the kubelet's back-off (10 s doubling to 5 min,
//     the first restart at once); on deletion SIGTERM, then SIGKILL when
//     the pod's grace period ends, and only then the pod is removed;
//   - cert-manager's issuer: every Certificate of the namespace gets its
//     Secret (a serving certificate for its DNS names from one CA, named
//     for the Certificate as cert-manager names it);
//   - cert-manager's cainjector, unless --inject-ca=false (the harness
//     then runs cert-manager's own injection code beside, tests/cert-manager):
//     the CA injected into the webhook configurations and CRDs whose
//     cert-manager.io/inject-ca-from names a Certificate of the namespace,
//     each time they are written without it;
//   - the network: each pod's sandbox publishes its pid for the cluster
//     proxy (proxy.go) under --sandboxes, and the API server's Service
//     address inside the pod forwards to the test API server.
//
// What is observed, not played: the CRDs' version label as the API server
// holds it ("crds" and "epoch" events when a write of a new version is
// seen), the Lease's holder ("lease" events), and how long each CRD of
// the namespace lacked its CA bundle after a write ("ca-missing",
// "ca-window").
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
)

const (
	injectAnnotation = "cert-manager.io/inject-ca-from"
	versionLabel     = "app.kubernetes.io/version"
	saPath           = "/var/run/secrets/kubernetes.io/serviceaccount"
)

var (
	certificates = schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}
	crdsResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	validating   = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	mutating     = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}
)

// realConfig is the real mode's part of the flags.
type realConfig struct {
	manager, crds, sandboxes, work string
	managers                       tagBinaries // a release's own manager, by image tag (--manager-for)
	injectCA                       bool        // play cainjector too (--inject-ca); else cert-manager's own runs beside
	subnet                         int         // pods get 198.18.SUBNET.x (RFC 2544: no real network uses it)
}

// real is the real mode's state beside the agent's.
type real struct {
	c      realConfig
	self   string // this binary, for the sandboxes
	ipTool string // iproute2's ip, for the sandboxes' network
	rest   *rest.Config
	dyn    dynamic.Interface
	caPEM  []byte
	caKey  *ecdsa.PrivateKey
	caCert *x509.Certificate

	mu      sync.Mutex
	crdSeen map[string]string // CRD name -> version label last seen
	caGone  map[string]int64  // CRD name -> when it was first seen without the CA bundle (Unix ms)
	holder  string            // the Lease's holder pod last seen
}

func newReal(c realConfig, restConfig *rest.Config) (*real, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ipTool, err := exec.LookPath("ip")
	if err != nil {
		return nil, fmt.Errorf("iproute2's ip is needed to set the pods' network up: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	r := &real{c: c, self: self, ipTool: ipTool, rest: restConfig, dyn: dyn, crdSeen: map[string]string{}, caGone: map[string]int64{}}
	r.caKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "asogen-harness-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &r.caKey.PublicKey, r.caKey)
	if err != nil {
		return nil, err
	}
	r.caCert, _ = x509.ParseCertificate(der)
	r.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return r, os.MkdirAll(c.sandboxes, 0o755)
}

// watch starts what the real mode plays and observes besides pods.
func (r *real) watch(ctx context.Context, a *agent) error {
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(r.dyn, 0, a.c.namespace, nil)
	certInf := f.ForResource(certificates).Informer()
	_, err := certInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.issue(ctx, a, o.(*unstructured.Unstructured)) },
		UpdateFunc: func(_, o any) { r.issue(ctx, a, o.(*unstructured.Unstructured)) },
	})
	if err != nil {
		return err
	}
	cluster := dynamicinformer.NewDynamicSharedInformerFactory(r.dyn, 0)
	for _, gvr := range []schema.GroupVersionResource{crdsResource, validating, mutating} {
		gvr := gvr
		_, err := cluster.ForResource(gvr).Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { r.clusterObject(ctx, a, gvr, o.(*unstructured.Unstructured)) },
			UpdateFunc: func(_, o any) { r.clusterObject(ctx, a, gvr, o.(*unstructured.Unstructured)) },
		})
		if err != nil {
			return err
		}
	}
	_, err = a.leaseInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { r.leaseSeen(a, o.(*coordinationv1.Lease)) },
		UpdateFunc: func(_, o any) { r.leaseSeen(a, o.(*coordinationv1.Lease)) },
	})
	if err != nil {
		return err
	}
	f.Start(ctx.Done())
	cluster.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	cluster.WaitForCacheSync(ctx.Done())
	return nil
}

// issue plays cert-manager for one Certificate: its Secret, from the CA.
func (r *real) issue(ctx context.Context, a *agent, cert *unstructured.Unstructured) {
	secretName, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if secretName == "" {
		return
	}
	secrets := a.client.CoreV1().Secrets(a.c.namespace)
	if s, err := secrets.Get(ctx, secretName, metav1.GetOptions{}); err == nil && bytes.Equal(s.Data["ca.crt"], r.caPEM) {
		return // issued already
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: firstOr(dnsNames, cert.GetName())},
		DNSNames: dnsNames, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, r.caCert, &key.PublicKey, r.caKey)
	if err != nil {
		return
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	data := map[string][]byte{
		"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"tls.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		"ca.crt":  r.caPEM,
	}
	// cert-manager names the Certificate on its Secret; its cainjector
	// injects a Secret's CA only so
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: a.c.namespace,
		Annotations: map[string]string{"cert-manager.io/certificate-name": cert.GetName()}},
		Type: corev1.SecretTypeTLS, Data: data}
	if _, err = secrets.Create(ctx, s, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
	}
	if err != nil && ctx.Err() == nil {
		a.log.write(map[string]any{"event": "error", "pod": "", "error": "cert-manager: " + err.Error()})
		return
	}
	a.log.write(map[string]any{"event": "certificate", "secret": secretName})
}

func firstOr(list []string, fallback string) string {
	if len(list) > 0 {
		return list[0]
	}
	return fallback
}

// clusterObject observes a CRD's version and injects the CA where a
// cluster object asks for one of this namespace's Certificates.
func (r *real) clusterObject(ctx context.Context, a *agent, gvr schema.GroupVersionResource, o *unstructured.Unstructured) {
	from := o.GetAnnotations()[injectAnnotation]
	ours := false
	if ns, _, _ := strings.Cut(from, "/"); ns == a.c.namespace {
		ours = true
	}
	if gvr == crdsResource {
		r.crdSeenAt(a, o)
		if ours {
			r.caWindow(a, o)
		}
	}
	if !ours || !r.c.injectCA || !r.needsCA(gvr, o) {
		return
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := r.dyn.Resource(gvr).Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		r.setCA(gvr, cur)
		_, err = r.dyn.Resource(gvr).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
		a.log.write(map[string]any{"event": "error", "pod": "", "error": "cainjector: " + err.Error()})
		return
	}
	a.log.write(map[string]any{"event": "ca-injected", "kind": gvr.Resource, "name": o.GetName()})
}

// caWindow writes "ca-missing" when a CRD is first seen without the CA
// bundle (the manager's CRD write replaces the whole CRD), and
// "ca-window" with how long it lacked it when it is seen with it again.
func (r *real) caWindow(a *agent, o *unstructured.Unstructured) {
	missing := r.needsCA(crdsResource, o)
	now := time.Now().UnixMilli()
	r.mu.Lock()
	since, tracked := r.caGone[o.GetName()]
	switch {
	case missing && !tracked:
		r.caGone[o.GetName()] = now
	case !missing && tracked:
		delete(r.caGone, o.GetName())
	}
	r.mu.Unlock()
	switch {
	case missing && !tracked:
		a.log.write(map[string]any{"event": "ca-missing", "crd": o.GetName()})
	case !missing && tracked:
		a.log.write(map[string]any{"event": "ca-window", "crd": o.GetName(), "ms": now - since})
	}
}

// caBundles lists where an object carries a CA bundle: the CRD's
// conversion webhook, or each webhook of a configuration.
func caBundles(gvr schema.GroupVersionResource, o *unstructured.Unstructured) []map[string]any {
	var out []map[string]any
	if gvr == crdsResource {
		cc, found, _ := unstructured.NestedMap(o.Object, "spec", "conversion", "webhook", "clientConfig")
		if found {
			out = append(out, cc)
		}
		return out
	}
	hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
	for _, h := range hooks {
		if cc, ok := h.(map[string]any)["clientConfig"].(map[string]any); ok {
			out = append(out, cc)
		}
	}
	return out
}

func (r *real) needsCA(gvr schema.GroupVersionResource, o *unstructured.Unstructured) bool {
	want := base64(r.caPEM)
	for _, cc := range caBundles(gvr, o) {
		if cc["caBundle"] != want {
			return true
		}
	}
	return false
}

func (r *real) setCA(gvr schema.GroupVersionResource, o *unstructured.Unstructured) {
	want := base64(r.caPEM)
	if gvr == crdsResource {
		_ = unstructured.SetNestedField(o.Object, want, "spec", "conversion", "webhook", "clientConfig", "caBundle")
		return
	}
	hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
	for _, h := range hooks {
		if cc, ok := h.(map[string]any)["clientConfig"].(map[string]any); ok {
			cc["caBundle"] = want
		}
	}
	_ = unstructured.SetNestedSlice(o.Object, hooks, "webhooks")
}

// crdSeenAt writes a "crds" event when a CRD's version label changed, and
// the version's CRD epoch the first time a CRD of it is seen after the
// agent started (the install's own CRDs are seen at the start).
func (r *real) crdSeenAt(a *agent, o *unstructured.Unstructured) {
	version := o.GetLabels()[versionLabel]
	r.mu.Lock()
	before, known := r.crdSeen[o.GetName()]
	r.crdSeen[o.GetName()] = version
	r.mu.Unlock()
	if known && before == version {
		return
	}
	a.log.write(map[string]any{"event": "crds", "version": version, "crd": o.GetName(), "before": before})
	if known {
		a.mu.Lock()
		if a.epochs == nil {
			a.epochs = map[string]bool{}
		}
		first := !a.epochs[version]
		a.epochs[version] = true
		a.crdVersion = version
		a.mu.Unlock()
		if first {
			a.log.write(map[string]any{"event": "epoch", "version": version, "pod": ""})
		}
	}
}

// leaseSeen writes "lease" events when the controllers' Lease changes hands.
func (r *real) leaseSeen(a *agent, l *coordinationv1.Lease) {
	if l.Name != leaseName {
		return
	}
	holder := ""
	if l.Spec.HolderIdentity != nil {
		h := *l.Spec.HolderIdentity
		holder = h[:max(0, strings.LastIndex(h, "_"))]
	}
	r.mu.Lock()
	before := r.holder
	r.holder = holder
	r.mu.Unlock()
	if before == holder {
		return
	}
	versionOf := func(name string) string {
		a.mu.Lock()
		defer a.mu.Unlock()
		if p := a.pods[name]; p != nil {
			return p.version
		}
		return ""
	}
	if before != "" {
		a.log.write(map[string]any{"event": "lease", "step": "released", "pod": before, "version": versionOf(before), "purpose": "observed"})
	}
	if holder != "" {
		a.log.write(map[string]any{"event": "lease", "step": "acquired", "pod": holder, "version": versionOf(holder), "purpose": "observed"})
	}
}

// ------------------------------------------------------------ the kubelet

// container is what one pod's container start needs, read once.
type container struct {
	spec  corev1.Container
	grace time.Duration
	root  string
	log   *os.File
}

// liveReal runs one pod from binding until it is deleted.
func (r *real) liveReal(ctx context.Context, a *agent, p *pod, o *corev1.Pod, bind bool) {
	defer close(p.stopped)
	if bind && !a.bindPod(ctx, p) {
		return
	}
	// the kubelet retries a volume whose Secret is not there yet (the
	// pod stays ContainerCreating); so does this, saying so once
	c, err := r.prepare(ctx, a, p, o)
	for said := false; err != nil; c, err = r.prepare(ctx, a, p, o) {
		if !said {
			a.log.write(map[string]any{"event": "pod", "step": "waiting-for-volumes", "pod": p.name, "error": err.Error()})
			said = true
		}
		if !sleep(ctx, time.Second) {
			return
		}
	}
	defer c.log.Close()
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		exit, why := r.runOnce(ctx, a, p, c)
		if ctx.Err() != nil {
			return
		}
		p.restarts++
		a.log.write(map[string]any{"event": "pod", "step": "restarted", "pod": p.name, "restarts": p.restarts,
			"exit": exit, "why": why})
		a.writeStatus(ctx, p, containerState{waiting: "CrashLoopBackOff"})
		switch {
		case backoff == 0:
			backoff = time.Second // the first restart: the next sync
		case backoff < 10*time.Second:
			backoff = 10 * time.Second
		default:
			backoff = min(2*backoff, 5*time.Minute)
		}
		if !sleep(ctx, backoff) {
			return
		}
	}
}

// bindPod binds p to its node (as a scheduler would); false when it failed.
func (a *agent) bindPod(ctx context.Context, p *pod) bool {
	err := a.client.CoreV1().Pods(a.c.namespace).Bind(ctx, &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, UID: typesUID(p.uid)},
		Target:     corev1.ObjectReference{Kind: "Node", Name: p.node},
	}, metav1.CreateOptions{})
	if err != nil {
		a.log.write(map[string]any{"event": "error", "pod": p.name, "error": "bind: " + err.Error()})
		return false
	}
	return true
}

// prepare writes the pod's root: the image's files and its volumes.
func (r *real) prepare(ctx context.Context, a *agent, p *pod, o *corev1.Pod) (*container, error) {
	var spec *corev1.Container
	for i := range o.Spec.Containers {
		if o.Spec.Containers[i].Name == a.c.container {
			spec = &o.Spec.Containers[i]
		}
	}
	if spec == nil {
		return nil, fmt.Errorf("no container %q", a.c.container)
	}
	if len(spec.Command) > 0 && spec.Command[0] != "/manager" {
		return nil, fmt.Errorf("the image runs /manager only, not %q", spec.Command[0])
	}
	dir := filepath.Join(r.c.work, p.name+"-"+p.uid[:8])
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(filepath.Join(root, "tmp"), 0o1777); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, "manager"), nil, 0o755); err != nil {
		return nil, err
	}
	// the image's CRDs: its tag's folder (none for a tag not generated)
	if err := os.MkdirAll(filepath.Join(root, "crds"), 0o755); err != nil {
		return nil, err
	}
	files, _ := os.ReadDir(filepath.Join(r.c.crds, p.version))
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(r.c.crds, p.version, f.Name()))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(root, "crds", f.Name()), data, 0o644); err != nil {
			return nil, err
		}
	}
	token, err := r.token(ctx, a, o, 3600)
	if err != nil {
		return nil, fmt.Errorf("service-account token: %w", err)
	}
	if err := writeFiles(root, saPath, map[string][]byte{
		"token": []byte(token), "ca.crt": r.rest.CAData, "namespace": []byte(a.c.namespace),
	}); err != nil {
		return nil, err
	}
	for _, m := range spec.VolumeMounts {
		files, err := r.volume(ctx, a, o, m.Name)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", m.Name, err)
		}
		if err := writeFiles(root, m.MountPath, files); err != nil {
			return nil, err
		}
	}
	grace := 30 * time.Second
	if o.Spec.TerminationGracePeriodSeconds != nil {
		grace = time.Duration(*o.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	log, err := os.Create(filepath.Join(dir, "manager.log"))
	if err != nil {
		return nil, err
	}
	return &container{spec: *spec, grace: grace, root: root, log: log}, nil
}

// writeFiles writes files into the folder at path inside root.
func writeFiles(root, path string, files map[string][]byte) error {
	dir := filepath.Join(root, filepath.Clean("/"+path))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(name)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// token asks the API server for the pod's service-account token.
func (r *real) token(ctx context.Context, a *agent, o *corev1.Pod, seconds int64) (string, error) {
	sa := o.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: o.Name, UID: o.UID},
	}}
	t, err := a.client.CoreV1().ServiceAccounts(a.c.namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return t.Status.Token, nil
}

// volume reads what a kubelet would put in a volume: a Secret's keys, a
// projected service-account token, or nothing (an emptyDir).
func (r *real) volume(ctx context.Context, a *agent, o *corev1.Pod, name string) (map[string][]byte, error) {
	for _, v := range o.Spec.Volumes {
		if v.Name != name {
			continue
		}
		switch {
		case v.Secret != nil:
			s, err := a.client.CoreV1().Secrets(a.c.namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return s.Data, nil
		case v.Projected != nil:
			files := map[string][]byte{}
			for _, src := range v.Projected.Sources {
				if t := src.ServiceAccountToken; t != nil {
					seconds := int64(3600)
					if t.ExpirationSeconds != nil {
						seconds = *t.ExpirationSeconds
					}
					token, err := r.token(ctx, a, o, seconds)
					if err != nil {
						return nil, err
					}
					files[t.Path] = []byte(token)
				}
			}
			return files, nil
		default:
			return map[string][]byte{}, nil
		}
	}
	return nil, fmt.Errorf("the pod has no volume %q", name)
}

// env resolves the container's environment as the kubelet does.
func (r *real) env(ctx context.Context, a *agent, p *pod, o *corev1.Pod, c corev1.Container) []string {
	out := []string{
		"KUBERNETES_SERVICE_HOST=" + apiServiceIP, "KUBERNETES_SERVICE_PORT=443",
		"HOSTNAME=" + o.Name, "PATH=/",
	}
	secret := func(name, key string) (string, bool) {
		s, err := a.client.CoreV1().Secrets(a.c.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", false
		}
		v, ok := s.Data[key]
		return string(v), ok
	}
	configMap := func(name, key string) (string, bool) {
		m, err := a.client.CoreV1().ConfigMaps(a.c.namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return "", false
		}
		v, ok := m.Data[key]
		return v, ok
	}
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil {
			if s, err := a.client.CoreV1().Secrets(a.c.namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{}); err == nil {
				for k, v := range s.Data {
					out = append(out, from.Prefix+k+"="+string(v))
				}
			}
		}
		if from.ConfigMapRef != nil {
			if m, err := a.client.CoreV1().ConfigMaps(a.c.namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{}); err == nil {
				for k, v := range m.Data {
					out = append(out, from.Prefix+k+"="+v)
				}
			}
		}
	}
	for _, e := range c.Env {
		value, ok := e.Value, true
		if src := e.ValueFrom; src != nil {
			switch {
			case src.SecretKeyRef != nil:
				value, ok = secret(src.SecretKeyRef.Name, src.SecretKeyRef.Key)
			case src.ConfigMapKeyRef != nil:
				value, ok = configMap(src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key)
			case src.FieldRef != nil:
				value = fieldOf(o, p, src.FieldRef.FieldPath)
			default:
				ok = false
			}
		}
		if ok {
			out = append(out, e.Name+"="+value)
		}
	}
	return out
}

// fieldOf resolves a downward-API field path.
func fieldOf(o *corev1.Pod, p *pod, path string) string {
	switch path {
	case "metadata.name":
		return o.Name
	case "metadata.namespace":
		return o.Namespace
	case "metadata.uid":
		return string(o.UID)
	case "spec.serviceAccountName":
		return o.Spec.ServiceAccountName
	case "spec.nodeName":
		return p.node
	case "status.podIP":
		return p.ip
	}
	if key, ok := strings.CutPrefix(path, "metadata.labels['"); ok {
		return o.Labels[strings.TrimSuffix(key, "']")]
	}
	if key, ok := strings.CutPrefix(path, "metadata.annotations['"); ok {
		return o.Annotations[strings.TrimSuffix(key, "']")]
	}
	return ""
}

// runOnce starts the container, probes it until it exits, is killed by a
// probe, or the pod is deleted; its exit code and why it ended.
func (r *real) runOnce(ctx context.Context, a *agent, p *pod, c *container) (int, string) {
	o, err := a.client.CoreV1().Pods(a.c.namespace).Get(ctx, p.name, metav1.GetOptions{})
	if err != nil {
		<-ctx.Done()
		return -1, "pod gone"
	}
	env := r.env(ctx, a, p, o, c.spec)
	args := append(append([]string{}, c.spec.Command...), c.spec.Args...)
	if len(c.spec.Command) > 0 {
		args = args[1:] // /manager itself
	}
	fmt.Fprintf(c.log, "---- start %d at %s\n", p.restarts, time.Now().Format(time.RFC3339Nano))
	var forward net.Listener
	sb, err := startSandbox(r.self, r.ipTool, c.root, p.ip, p.name, r.c.binaryOf(p.version), args, env, c.log, func(pid int) error {
		l, err := listenIn(pid, net.JoinHostPort(apiServiceIP, "443"))
		if err != nil {
			return fmt.Errorf("the API server's address in the pod: %w", err)
		}
		forward = l
		go r.forwardAPI(l)
		return os.WriteFile(filepath.Join(r.c.sandboxes, p.ip), []byte(strconv.Itoa(pid)), 0o644)
	})
	if err != nil {
		a.log.write(map[string]any{"event": "error", "pod": p.name, "error": "start: " + err.Error()})
		return -1, "start failed"
	}
	defer func() {
		forward.Close()
		_ = os.Remove(filepath.Join(r.c.sandboxes, p.ip))
	}()
	pid := sb.cmd.Process.Pid
	a.log.write(map[string]any{"event": "pod", "step": "container-started", "pod": p.name, "version": p.version, "pid": pid})
	a.writeStatus(ctx, p, containerState{})
	kill := make(chan string, 3)
	probes, stopProbes := context.WithCancel(ctx)
	defer stopProbes()
	go r.probeAll(probes, a, p, pid, c.spec, kill)
	select {
	case <-sb.done:
		return sb.exit, "exited"
	case why := <-kill:
		r.stop(sb, c.spec, c.grace)
		return sb.exit, why
	case <-ctx.Done():
		r.stop(sb, c.spec, c.grace)
		a.log.write(map[string]any{"event": "pod", "step": "stopped", "pod": p.name, "version": p.version, "exit": sb.exit})
		return sb.exit, "deleted"
	}
}

// stop runs the container's preStop hook (a sleep, the only kind its
// image can run), then sends SIGTERM, and SIGKILL when the grace period
// (which the hook counts against) ends first.
func (r *real) stop(sb *sandbox, c corev1.Container, grace time.Duration) {
	deadline := time.After(grace)
	if h := c.Lifecycle; h != nil && h.PreStop != nil && h.PreStop.Sleep != nil {
		select {
		case <-sb.done:
			return
		case <-deadline:
			sb.kill()
			return
		case <-time.After(time.Duration(h.PreStop.Sleep.Seconds) * time.Second):
		}
	}
	sb.signal(syscall.SIGTERM)
	select {
	case <-sb.done:
	case <-deadline:
		sb.kill()
	}
}

// forwardAPI carries the pod's connections to the API server's Service
// address to the test API server.
func (r *real) forwardAPI(l net.Listener) {
	host := strings.TrimPrefix(r.rest.Host, "https://")
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := net.DialTimeout("tcp", host, dialTimeout)
			if err != nil {
				conn.Close()
				return
			}
			splice(conn, up)
		}()
	}
}

// probeAll runs the container's probes as the kubelet does: the startup
// probe until it succeeds, then liveness and readiness. A failed startup
// or liveness probe sends why on kill.
func (r *real) probeAll(ctx context.Context, a *agent, p *pod, pid int, c corev1.Container, kill chan<- string) {
	if c.StartupProbe != nil {
		if !r.probeUntil(ctx, pid, c, c.StartupProbe, true) {
			if ctx.Err() == nil {
				a.log.write(map[string]any{"event": "pod", "step": "startup-probe-failed", "pod": p.name, "version": p.version})
				kill <- "startup probe failed"
			}
			return
		}
	}
	a.writeStatus(ctx, p, containerState{started: true})
	if c.LivenessProbe != nil {
		go func() {
			if !r.probeUntil(ctx, pid, c, c.LivenessProbe, false) && ctx.Err() == nil {
				a.log.write(map[string]any{"event": "pod", "step": "liveness-probe-failed", "pod": p.name, "version": p.version})
				kill <- "liveness probe failed"
			}
		}()
	}
	if c.ReadinessProbe == nil {
		a.writeStatus(ctx, p, containerState{started: true, ready: true})
		return
	}
	pr := c.ReadinessProbe
	ready, fails, oks := false, 0, 0
	tick := period(pr)
	if !sleep(ctx, time.Duration(pr.InitialDelaySeconds)*time.Second) {
		return
	}
	for {
		if r.probe(pid, c, pr) {
			fails, oks = 0, oks+1
			if !ready && oks >= int(max(1, pr.SuccessThreshold)) {
				ready = true
				a.writeStatus(ctx, p, containerState{started: true, ready: true})
				a.log.write(map[string]any{"event": "pod", "step": "ready", "pod": p.name, "version": p.version})
			}
		} else {
			fails, oks = fails+1, 0
			if ready && fails >= int(max(1, pr.FailureThreshold)) {
				ready = false
				a.writeStatus(ctx, p, containerState{started: true})
				a.log.write(map[string]any{"event": "pod", "step": "unready", "pod": p.name, "version": p.version})
			}
		}
		if !sleep(ctx, tick) {
			return
		}
	}
}

// probeUntil runs a probe every period: until its first success when
// untilSuccess (true then), else until failureThreshold failures in a
// row (false then).
func (r *real) probeUntil(ctx context.Context, pid int, c corev1.Container, pr *corev1.Probe, untilSuccess bool) bool {
	if !sleep(ctx, time.Duration(pr.InitialDelaySeconds)*time.Second) {
		return false
	}
	fails := 0
	for {
		if r.probe(pid, c, pr) {
			if untilSuccess {
				return true
			}
			fails = 0
		} else if fails++; fails >= int(max(1, pr.FailureThreshold)) {
			return false
		}
		if !sleep(ctx, period(pr)) {
			return false
		}
	}
}

func period(pr *corev1.Probe) time.Duration {
	return time.Duration(max(1, pr.PeriodSeconds)) * time.Second
}

// portOf resolves a probe's port, a number or a container port's name.
func portOf(c corev1.Container, port intstr.IntOrString) int {
	if port.Type == intstr.String {
		for _, cp := range c.Ports {
			if cp.Name == port.StrVal {
				return int(cp.ContainerPort)
			}
		}
		return 0
	}
	return port.IntValue()
}

// probe runs one probe (HTTP GET or TCP, the kinds the manager's pods
// use) from inside the pod's network namespace.
func (r *real) probe(pid int, c corev1.Container, pr *corev1.Probe) bool {
	if t := pr.TCPSocket; t != nil {
		conn, err := dialIn(pid, net.JoinHostPort("127.0.0.1", strconv.Itoa(portOf(c, t.Port))))
		if err != nil {
			return false
		}
		conn.Close()
		return true
	}
	h := pr.HTTPGet
	if h == nil {
		return false
	}
	port := portOf(c, h.Port)
	timeout := time.Duration(max(1, pr.TimeoutSeconds)) * time.Second
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return dialIn(pid, addr)
		},
	}}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, h.Path))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 400
}

// deleteWhenStopped removes a terminating pod once its container stopped
// (the kubelet's last word on a pod).
func (a *agent) deleteWhenStopped(ctx context.Context, p *pod, name string, uid string) {
	select {
	case <-p.stopped:
	case <-ctx.Done():
		return
	}
	a.deleteLater(ctx, name, typesUID(uid))
}

// binaryOf is the manager a pod of image tag `version` runs: the one
// --manager-for names for that tag, else --manager.
func (c realConfig) binaryOf(version string) string {
	if bin, ok := c.managers[version]; ok {
		return bin
	}
	return c.manager
}

// tagBinaries is the --manager-for flag: TAG=PATH, given once a release.
type tagBinaries map[string]string

func (t *tagBinaries) String() string { return fmt.Sprint(map[string]string(*t)) }

func (t *tagBinaries) Set(value string) error {
	tag, path, ok := strings.Cut(value, "=")
	if !ok || tag == "" || path == "" {
		return fmt.Errorf("want TAG=PATH, got %q", value)
	}
	if *t == nil {
		*t = tagBinaries{}
	}
	(*t)[tag] = path
	return nil
}
