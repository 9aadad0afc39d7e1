// A stand-in for the kubelets and for ASO's start-up, for the rollout
// harness (tests/rollout.rs): no container runs, but every pod of one
// namespace goes through the life a real node and a real ASO 2.20.0 pod
// would give it, on the test API server, while the real
// kube-controller-manager rolls the Deployments out. It writes what it
// saw, one JSON object a line, for the harness to compute the invariants
// of docs/split-topology.md section 2.
//
// What it plays (the facts are docs/split-topology.md F1-F4 and F7):
//   - three Nodes harness-node-{1,2,3} (--nodes, --node-prefix), Ready,
//     with room for 110 pods; every new pod of the namespace is bound to
//     one, round-robin; with --bind=false (the HA tests, tests/ha.rs) the
//     real kube-scheduler binds them and the agent plays each pod on the
//     node it was bound to, and renews each Node's Lease (as a kubelet
//     does) so that the node lifecycle controller keeps them Ready;
//   - after --start-delay a pod is Running with an address from
//     192.0.2.0/24 (EndpointSlices refuse loopback; nothing is ever sent);
//   - a pod whose mode includes webhooks (AZURE_OPERATOR_MODE from its env
//     or the Secret key it names; unset means watchers-and-webhooks) and
//     that does not run --crd-management=none applies CRDs when the CRDs
//     are not of its version: with --enable-leader-election it first takes
//     the Lease controllers-leader-election-azinfra-generated (15 s, 10 s,
//     2 s), not Ready meanwhile, and is restarted when --startup-budget
//     passes first; it then stays not Ready for --crd-apply, releases the
//     Lease and restarts (the process exits 0 after applying), reaching
//     the CRD step again after --restart-delay;
//   - then the manager starts: Ready after --ready-delay; a pod whose mode
//     includes watchers, with leader election, campaigns for the same Lease
//     and holds it until the pod terminates (released on cancel);
//   - a terminating pod is deleted with grace 0 after --grace-delay.
//
// Output lines: {"t":MS,"event":...} with t in Unix milliseconds; the
// events are "pod" (a pod's step), "epoch" (the CRD epoch of a version:
// the first moment a CRD-applying pod of it may write CRDs), "crds"
// (CRDs written), "lease" (acquired or released) and "sample" (every
// --sample interval when something changed: the ready endpoints of the
// webhook Service, the pods, the Lease holder, each Deployment's state).
//
// It stops on SIGTERM, SIGINT or end of file on stdin (the harness holds
// the other end), deleting nothing.
package main

import (
	"bufio"
	"context"
	stdbase64 "encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/signal"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
)

// ASO 2.20.0's Lease and timings (compiled into the operator, F4).
const (
	leaseName     = "controllers-leader-election-azinfra-generated"
	leaseDuration = 15 * time.Second
	renewDeadline = 10 * time.Second
	retryPeriod   = 2 * time.Second
	modeEnv       = "AZURE_OPERATOR_MODE"
)

type config struct {
	namespace, service, container string
	bind                          bool
	nodes                         int
	nodePrefix, nodeLabel         string
	startDelay, readyDelay        time.Duration
	restartDelay                  time.Duration
	graceDelay, crdApply          time.Duration
	startupBudget, sample         time.Duration
	ipBase                        int
	real                          realConfig
	traffic                       time.Duration
	probeSocket                   string // real mode: the cluster proxy's socket, for the probe (traffic.go)
}

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "sandbox": // real.go's container process, before it runs the manager
			sandboxMain(os.Args[2:])
			return
		case "proxy":
			proxyMain(os.Args[2:])
			return
		}
	}
	kubeconfig := flag.String("kubeconfig", "", "the API server's kubeconfig")
	out := flag.String("out", "", "file the events are written to (default: stdout)")
	var c config
	flag.StringVar(&c.namespace, "namespace", "", "the namespace whose pods it runs")
	flag.StringVar(&c.service, "service", "azureserviceoperator-webhook-service", "the webhook Service whose endpoints are sampled")
	flag.StringVar(&c.container, "container", "manager", "the container whose image tag is the pod's version")
	flag.DurationVar(&c.startDelay, "start-delay", time.Second, "from binding (or a restart) to Running")
	flag.DurationVar(&c.restartDelay, "restart-delay", 5*time.Second, "from a container's exit to its next start reaching the CRD step (kubelet restart and ASO's initialisation)")
	flag.DurationVar(&c.readyDelay, "ready-delay", time.Second, "from the manager's start to Ready")
	flag.DurationVar(&c.graceDelay, "grace-delay", time.Second, "from terminating to deleted")
	flag.DurationVar(&c.crdApply, "crd-apply", 2*time.Second, "how long applying the CRDs takes")
	flag.DurationVar(&c.startupBudget, "startup-budget", 120*time.Second, "the startup probe's budget (12 x 10 s in 2.20.0)")
	flag.DurationVar(&c.sample, "sample", 100*time.Millisecond, "sampling interval")
	flag.IntVar(&c.ipBase, "ip-base", 1, "first host number of the pod addresses in 192.0.2.0/24")
	flag.BoolVar(&c.bind, "bind", true, "bind each new pod to a node, round-robin (false: a scheduler binds them; the agent renews the Nodes' Leases)")
	flag.IntVar(&c.nodes, "nodes", 3, "how many Nodes it plays")
	flag.StringVar(&c.nodePrefix, "node-prefix", "harness-node-", "the Nodes' names, before their number (1, 2, ...)")
	flag.StringVar(&c.nodeLabel, "node-label", "", "a label KEY=VALUE every Node it plays carries (a node pool)")
	flag.StringVar(&c.real.manager, "manager", "", "real mode: ASO's manager binary, run as each pod's container (real.go)")
	flag.StringVar(&c.real.crds, "crds", "", "real mode: a folder of CRD folders, one per image tag")
	flag.BoolVar(&c.real.injectCA, "inject-ca", true, "real mode: play cert-manager's cainjector as well as its issuer (false: cert-manager's own cainjector runs beside; the agent reports each CRD's CA window)")
	flag.Var(&c.real.managers, "manager-for", "real mode: TAG=PATH, the manager binary of the pods whose image tag is TAG (another release's build); repeatable")
	flag.StringVar(&c.real.sandboxes, "sandboxes", "", "real mode: the folder where each pod's sandbox pid is published for the cluster proxy")
	flag.StringVar(&c.real.work, "work", "", "real mode: the folder the pods' roots and logs go to")
	flag.IntVar(&c.real.subnet, "subnet", 0, "real mode: pods get addresses 198.18.SUBNET.x")
	flag.DurationVar(&c.traffic, "traffic", 0, "real mode: each user's interval between requests outside a burst (0: none)")
	flag.StringVar(&c.probeSocket, "probe-socket", "", "real mode: the cluster proxy's socket, through which a probe opens a new connection to the webhook Service each traffic interval (each 20 ms in a burst)")
	flag.Parse()
	quietKlog()
	if *kubeconfig == "" || c.namespace == "" {
		fmt.Fprintln(os.Stderr, "node-agent: --kubeconfig and --namespace are required")
		os.Exit(2)
	}
	if err := run(*kubeconfig, *out, c); err != nil {
		fmt.Fprintf(os.Stderr, "node-agent: %v\n", err)
		os.Exit(1)
	}
}

// quietKlog silences client-go's own log (each Lease step, and the
// elector's errors when a pod is deleted under it), which would drown the
// test output; what matters is in the events.
func quietKlog() {
	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	_ = klogFlags.Set("stderrthreshold", "FATAL")
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}

// proxyMain is `node-agent proxy`: the cluster proxy of the real mode (proxy.go).
func proxyMain(args []string) {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "the API server's kubeconfig")
	socket := fs.String("socket", "", "the Unix socket the API server's egress selector connects to")
	sandboxes := fs.String("sandboxes", "", "the folder where the agents publish each pod's sandbox pid")
	out := fs.String("out", "", "file the events are written to (default: stdout)")
	lag := fs.Duration("lag", time.Second, "how long an EndpointSlice change takes to reach its routing (kube-proxy's --iptables-min-sync-period, 1 s by default)")
	_ = fs.Parse(args)
	quietKlog()
	if *kubeconfig == "" || *socket == "" || *sandboxes == "" {
		fmt.Fprintln(os.Stderr, "node-agent proxy: --kubeconfig, --socket and --sandboxes are required")
		os.Exit(2)
	}
	err := func() error {
		client, _, err := clients(*kubeconfig)
		if err != nil {
			return err
		}
		w, closeOut, err := output(*out)
		if err != nil {
			return err
		}
		defer closeOut()
		ctx, stop := lifetime()
		defer stop()
		return runProxy(ctx, client, *socket, *sandboxes, *lag, &eventLog{w: w})
	}()
	if err != nil {
		fmt.Fprintf(os.Stderr, "node-agent proxy: %v\n", err)
		os.Exit(1)
	}
}

func clients(kubeconfig string) (kubernetes.Interface, *rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(cfg)
	return client, cfg, err
}

func output(path string) (io.Writer, func(), error) {
	if path == "" {
		return os.Stdout, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

// lifetime ends on SIGTERM, SIGINT or end of file on stdin (the harness
// holds the other end).
func lifetime() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
		stop()
	}()
	return ctx, stop
}

func run(kubeconfig, out string, c config) error {
	client, restConfig, err := clients(kubeconfig)
	if err != nil {
		return err
	}
	w, closeOut, err := output(out)
	if err != nil {
		return err
	}
	defer closeOut()
	ctx, stop := lifetime()
	defer stop()
	a := &agent{c: c, client: client, log: &eventLog{w: w}, pods: map[string]*pod{}, crdVersion: ""}
	if c.real.manager != "" {
		if c.real.crds == "" || c.real.sandboxes == "" || c.real.work == "" {
			return fmt.Errorf("--manager needs --crds, --sandboxes and --work")
		}
		if a.real, err = newReal(c.real, restConfig); err != nil {
			return fmt.Errorf("real mode: %w", err)
		}
	}
	if err := a.ensureNodes(ctx); err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	if !c.bind {
		go a.heartbeat(ctx)
	}
	f := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(c.namespace))
	a.podInf = f.Core().V1().Pods().Informer()
	a.sliceInf = f.Discovery().V1().EndpointSlices().Informer()
	a.deployInf = f.Apps().V1().Deployments().Informer()
	a.leaseInf = f.Coordination().V1().Leases().Informer()
	_, err = a.podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { a.seen(ctx, o.(*corev1.Pod)) },
		UpdateFunc: func(_, o any) { a.seen(ctx, o.(*corev1.Pod)) },
		DeleteFunc: func(o any) { a.gone(o) },
	})
	if err != nil {
		return err
	}
	f.Start(ctx.Done())
	f.WaitForCacheSync(ctx.Done())
	if a.real != nil {
		if err := a.real.watch(ctx, a); err != nil {
			return err
		}
		if c.traffic > 0 {
			go traffic(ctx, a.real.dyn, c.namespace, c.traffic, a.log)
		}
		if c.probeSocket != "" {
			go probe(ctx, client, c.namespace, c.service, c.probeSocket, c.traffic, a.log)
		}
	}
	a.log.write(map[string]any{"event": "started", "namespace": c.namespace, "real": a.real != nil})
	a.sampleLoop(ctx)
	f.Shutdown()
	return nil
}

// eventLog writes one JSON object a line, stamped with the time.
type eventLog struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *eventLog) write(fields map[string]any) {
	fields["t"] = time.Now().UnixMilli()
	startBurst(fields)
	line, _ := json.Marshal(fields)
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(append(line, '\n'))
}

type agent struct {
	c      config
	client kubernetes.Interface
	log    *eventLog

	podInf, sliceInf, deployInf, leaseInf cache.SharedIndexInformer

	mu         sync.Mutex
	pods       map[string]*pod // by name, while the pod exists
	nextNode   int
	nextIP     int
	crdVersion string          // the version the CRDs are at ("" before any)
	epochs     map[string]bool // versions whose CRD epoch was written
	real       *real           // the real mode's state (nil: modelled)
}

// pod is what the agent knows of one pod and the life it plays for it.
type pod struct {
	name, uid, version, role string
	ip, node                 string
	watchers, webhooks       bool
	appliesCRDs, election    bool
	badMode                  string
	started                  bool
	terminating              bool
	cancel                   context.CancelFunc
	restarts                 int32
	stopped                  chan struct{} // real mode: closed when its container stopped
}

// nodeName is the name of the i-th Node it plays (from 1).
func (a *agent) nodeName(i int) string {
	return fmt.Sprintf("%s%d", a.c.nodePrefix, i)
}

// room is what each Node offers a scheduler: far more than the pods of
// one install ask for, so only their constraints decide where they go.
var room = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("8"),
	corev1.ResourceMemory: resource.MustParse("32Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

func (a *agent) ensureNodes(ctx context.Context) error {
	for i := 1; i <= a.c.nodes; i++ {
		name := a.nodeName(i)
		labels := map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
		if k, v, ok := strings.Cut(a.c.nodeLabel, "="); ok {
			labels[k] = v
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		_, err := a.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := a.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			now := metav1.Now()
			n.Status.Conditions = []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "HarnessNode",
				LastHeartbeatTime: now, LastTransitionTime: now,
			}}
			n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("192.0.2.%d", 250+i%5)}}
			n.Status.Capacity, n.Status.Allocatable = room, room
			_, err = a.client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// heartbeat renews each Node's Lease in kube-node-lease as a kubelet does
// (every 10 s, for 40 s), until ctx ends: without it the node lifecycle
// controller would find the Nodes silent and taint them unreachable.
func (a *agent) heartbeat(ctx context.Context) {
	const namespace, duration = "kube-node-lease", int32(40)
	for {
		for i := 1; i <= a.c.nodes; i++ {
			name := a.nodeName(i)
			now := metav1.NewMicroTime(time.Now())
			leases := a.client.CoordinationV1().Leases(namespace)
			l, err := leases.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				l = &coordinationv1.Lease{
					ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
					Spec:       coordinationv1.LeaseSpec{HolderIdentity: &name, LeaseDurationSeconds: &[]int32{duration}[0], RenewTime: &now},
				}
				_, err = leases.Create(ctx, l, metav1.CreateOptions{})
			} else if err == nil {
				l.Spec.RenewTime = &now
				_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
			}
			if err != nil && ctx.Err() == nil && !apierrors.IsConflict(err) {
				a.log.write(map[string]any{"event": "error", "pod": "", "error": "node lease " + name + ": " + err.Error()})
			}
		}
		if !sleep(ctx, 10*time.Second) {
			return
		}
	}
}

// seen handles every add or update of a pod.
func (a *agent) seen(ctx context.Context, o *corev1.Pod) {
	// Only seen and gone change a.pods, and client-go calls the handlers
	// one at a time, so the pod cannot appear between the two locks.
	a.mu.Lock()
	p, known := a.pods[o.Name]
	known = known && p.uid == string(o.UID) // not a new pod of the same name
	a.mu.Unlock()
	var fresh *pod
	if !known {
		fresh = a.describe(o) // may read a Secret: not under the lock
	}
	a.mu.Lock()
	if !known {
		p = fresh
		a.pods[o.Name] = p
		a.log.write(map[string]any{"event": "pod", "step": "created", "pod": p.name, "version": p.version,
			"role": p.role, "watchers": p.watchers, "webhooks": p.webhooks, "applies_crds": p.appliesCRDs,
			"leader_election": p.election, "created": o.CreationTimestamp.UnixMilli()})
		if p.badMode != "" {
			a.log.write(map[string]any{"event": "pod", "step": "bad-mode", "pod": p.name, "mode": p.badMode})
		}
	}
	if o.DeletionTimestamp != nil && !p.terminating {
		p.terminating = true
		if p.cancel != nil {
			p.cancel()
		}
		a.log.write(map[string]any{"event": "pod", "step": "terminating", "pod": p.name, "version": p.version, "ip": p.ip})
		if a.real != nil && p.started {
			go a.deleteWhenStopped(ctx, p, o.Name, string(o.UID))
		} else {
			go a.deleteLater(ctx, o.Name, o.UID)
		}
	}
	// without --bind a pod starts once the scheduler bound it
	start := !p.started && !p.terminating && (a.c.bind || o.Spec.NodeName != "")
	if start {
		p.started = true
		if o.Spec.NodeName != "" {
			p.node = o.Spec.NodeName
		} else {
			p.node = a.nodeName(a.nextNode%a.c.nodes + 1)
			a.nextNode++
		}
		p.ip = fmt.Sprintf("192.0.2.%d", (a.c.ipBase+a.nextIP)%240+1)
		if a.real != nil {
			p.ip = fmt.Sprintf("198.18.%d.%d", a.c.real.subnet, a.nextIP%250+2)
		}
		a.nextIP++
		life, cancel := context.WithCancel(ctx)
		p.cancel = cancel
		if a.real != nil {
			p.stopped = make(chan struct{})
			go a.real.liveReal(life, a, p, o.DeepCopy(), o.Spec.NodeName == "")
		} else {
			go a.live(life, p, o.Spec.NodeName == "")
		}
	}
	a.mu.Unlock()
}

// describe reads a pod's version, role and ASO mode from its spec.
func (a *agent) describe(o *corev1.Pod) *pod {
	p := &pod{name: o.Name, uid: string(o.UID), role: o.Labels["control-plane"]}
	for _, c := range o.Spec.Containers {
		if c.Name != a.c.container {
			continue
		}
		if i := strings.LastIndex(c.Image, ":"); i >= 0 {
			p.version = c.Image[i+1:]
		}
		mode := a.mode(c)
		switch strings.ToLower(mode) {
		case "", "watchers-and-webhooks":
			p.watchers, p.webhooks = true, true
		case "watchers":
			p.watchers = true
		case "webhooks":
			p.webhooks = true
		default:
			p.badMode = mode // ASO exits at start: never Ready
		}
		management := "auto"
		for _, arg := range append(append([]string{}, c.Command...), c.Args...) {
			switch {
			case arg == "--enable-leader-election" || arg == "--enable-leader-election=true":
				p.election = true
			case strings.HasPrefix(arg, "--crd-management="):
				management = strings.TrimPrefix(arg, "--crd-management=")
			}
		}
		p.appliesCRDs = p.webhooks && management == "auto"
	}
	return p
}

// mode is the container's AZURE_OPERATOR_MODE: a literal, or the Secret
// key it names (2.20.0 reads it from aso-controller-settings, optional).
func (a *agent) mode(c corev1.Container) string {
	for _, e := range c.Env {
		if e.Name != modeEnv {
			continue
		}
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			return e.Value
		}
		ref := e.ValueFrom.SecretKeyRef
		s, err := a.client.CoreV1().Secrets(a.c.namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		return string(s.Data[ref.Key])
	}
	return ""
}

// live plays one pod from binding to termination.
func (a *agent) live(ctx context.Context, p *pod, bind bool) {
	if bind {
		err := a.client.CoreV1().Pods(a.c.namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.name, UID: types.UID(p.uid)},
			Target:     corev1.ObjectReference{Kind: "Node", Name: p.node},
		}, metav1.CreateOptions{})
		if err != nil {
			a.log.write(map[string]any{"event": "error", "pod": p.name, "error": "bind: " + err.Error()})
			return
		}
	}
	for delay := a.c.startDelay; ; delay = a.c.restartDelay {
		if !sleep(ctx, delay) {
			return
		}
		a.setStatus(ctx, p, false)
		if p.badMode != "" {
			<-ctx.Done() // exits at start, for ever
			return
		}
		if p.appliesCRDs && a.crds() != p.version {
			if !a.applyCRDs(ctx, p) {
				return
			}
			p.restarts++
			a.log.write(map[string]any{"event": "pod", "step": "restarted", "pod": p.name, "restarts": p.restarts})
			continue
		}
		// the manager starts: health probes answer, then the elector
		if !sleep(ctx, a.c.readyDelay) {
			return
		}
		a.setStatus(ctx, p, true)
		a.log.write(map[string]any{"event": "pod", "step": "ready", "pod": p.name, "version": p.version})
		if p.watchers && p.election {
			a.hold(ctx, p, "leader", nil)
		}
		<-ctx.Done()
		return
	}
}

// applyCRDs plays ASO's CRD step (F3); false when the pod terminated.
// Either way the process ends: it exits 0 after applying, or the
// startup probe's budget restarts it while it waits for the Lease.
func (a *agent) applyCRDs(ctx context.Context, p *pod) bool {
	apply := func() {
		a.epoch(p)
		if a.crds() == p.version { // double-checked under the lock
			return
		}
		if !sleep(ctx, a.c.crdApply) {
			return
		}
		a.mu.Lock()
		a.crdVersion = p.version
		a.mu.Unlock()
		a.log.write(map[string]any{"event": "crds", "version": p.version, "pod": p.name})
	}
	if !p.election {
		apply()
		return ctx.Err() == nil
	}
	budget, cancel := context.WithTimeout(ctx, a.c.startupBudget)
	defer cancel()
	var applied atomic.Bool
	a.hold(budget, p, "crds", func() { apply(); applied.Store(true) })
	if ctx.Err() != nil {
		return false
	}
	if !applied.Load() {
		a.log.write(map[string]any{"event": "pod", "step": "startup-budget-spent", "pod": p.name, "version": p.version})
	}
	return true
}

// hold campaigns for the Lease as the pod; once it leads, runs work (if
// any) and releases, or else holds it until ctx ends, then releases.
func (a *agent) hold(ctx context.Context, p *pod, purpose string, work func()) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var led atomic.Bool
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: leaseName, Namespace: a.c.namespace},
		Client:     a.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: fmt.Sprintf("%s_%08x", p.name, rand.Uint32())},
	}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, Name: p.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				led.Store(true)
				a.log.write(map[string]any{"event": "lease", "step": "acquired", "pod": p.name, "version": p.version, "purpose": purpose})
				if work != nil {
					work()
					cancel()
				}
			},
			OnStoppedLeading: func() {},
		},
	})
	if err != nil {
		a.log.write(map[string]any{"event": "error", "pod": p.name, "error": "elector: " + err.Error()})
		return
	}
	a.log.write(map[string]any{"event": "lease", "step": "campaign", "pod": p.name, "version": p.version, "purpose": purpose})
	elector.Run(ctx) // returns once ctx ends, the Lease released if held
	if led.Load() {
		a.log.write(map[string]any{"event": "lease", "step": "released", "pod": p.name, "version": p.version, "purpose": purpose})
	}
}

func (a *agent) crds() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.crdVersion
}

// epoch writes the CRD epoch of p's version, the first time only.
func (a *agent) epoch(p *pod) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.epochs == nil {
		a.epochs = map[string]bool{}
	}
	if !a.epochs[p.version] {
		a.epochs[p.version] = true
		a.log.write(map[string]any{"event": "epoch", "version": p.version, "pod": p.name})
	}
}

// setStatus writes what a kubelet would: Running, the address, Ready.
func (a *agent) setStatus(ctx context.Context, p *pod, ready bool) {
	a.writeStatus(ctx, p, containerState{started: true, ready: ready})
}

// containerState is the manager container's state as a kubelet reports it.
type containerState struct {
	started, ready bool
	waiting        string // a reason it is not running (CrashLoopBackOff), or ""
}

// writeStatus writes a pod's status: Running, its address, its
// container's state and readiness (a terminating pod's is left alone).
func (a *agent) writeStatus(ctx context.Context, p *pod, st containerState) {
	cond := corev1.ConditionFalse
	if st.ready {
		cond = corev1.ConditionTrue
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		o, err := a.client.CoreV1().Pods(a.c.namespace).Get(ctx, p.name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if string(o.UID) != p.uid || o.DeletionTimestamp != nil {
			return nil
		}
		now := metav1.Now()
		if o.Status.StartTime == nil {
			o.Status.StartTime = &now
		}
		o.Status.Phase = corev1.PodRunning
		o.Status.HostIP = "192.0.2.250"
		o.Status.HostIPs = []corev1.HostIP{{IP: o.Status.HostIP}}
		o.Status.PodIP = p.ip
		o.Status.PodIPs = []corev1.PodIP{{IP: p.ip}}
		o.Status.Conditions = []corev1.PodCondition{
			condition(o, corev1.PodScheduled, corev1.ConditionTrue, now),
			condition(o, corev1.PodInitialized, corev1.ConditionTrue, now),
			condition(o, corev1.ContainersReady, cond, now),
			condition(o, corev1.PodReady, cond, now),
		}
		state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}
		if st.waiting != "" {
			state = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: st.waiting}}
		}
		var statuses []corev1.ContainerStatus
		for _, c := range o.Spec.Containers {
			statuses = append(statuses, corev1.ContainerStatus{
				Name: c.Name, Image: c.Image, ImageID: c.Image, Ready: st.ready, Started: &st.started,
				RestartCount: p.restarts, State: state,
			})
		}
		o.Status.ContainerStatuses = statuses
		_, err = a.client.CoreV1().Pods(a.c.namespace).UpdateStatus(ctx, o, metav1.UpdateOptions{})
		return err
	})
	if err != nil && ctx.Err() == nil && !apierrors.IsNotFound(err) {
		a.log.write(map[string]any{"event": "error", "pod": p.name, "error": "status: " + err.Error()})
	}
}

// condition keeps the transition time of a condition whose status stays.
func condition(o *corev1.Pod, t corev1.PodConditionType, s corev1.ConditionStatus, now metav1.Time) corev1.PodCondition {
	for _, c := range o.Status.Conditions {
		if c.Type == t && c.Status == s {
			return c
		}
	}
	return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: now}
}

func (a *agent) deleteLater(ctx context.Context, name string, uid types.UID) {
	if !sleep(ctx, a.c.graceDelay) {
		return
	}
	zero := int64(0)
	err := a.client.CoreV1().Pods(a.c.namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
		a.log.write(map[string]any{"event": "error", "pod": name, "error": "delete: " + err.Error()})
	}
}

func (a *agent) gone(o any) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	po, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.pods[po.Name]; ok && p.uid == string(po.UID) {
		if p.cancel != nil {
			p.cancel()
		}
		delete(a.pods, po.Name)
		a.log.write(map[string]any{"event": "pod", "step": "gone", "pod": p.name, "version": p.version})
	}
}

// ---------------------------------------------------------------- sampling

type endpoint struct {
	Pod     string `json:"pod"`
	Version string `json:"version"`
}

type podState struct {
	Pod         string `json:"pod"`
	Node        string `json:"node"`
	Deployment  string `json:"deployment"`
	Version     string `json:"version"`
	Role        string `json:"role"`
	Watchers    bool   `json:"watchers"`
	Ready       bool   `json:"ready"`
	Terminating bool   `json:"terminating"`
}

type deployState struct {
	Name       string `json:"name"`
	Generation int64  `json:"generation"`
	Complete   bool   `json:"complete"`
	Replicas   int32  `json:"replicas"`
	Ready      int32  `json:"ready"`
	Updated    int32  `json:"updated"`
	Total      int32  `json:"total"`
}

type sample struct {
	Endpoints   []endpoint    `json:"endpoints"`
	Pods        []podState    `json:"pods"`
	Holder      string        `json:"holder"`
	Deployments []deployState `json:"deployments"`
}

func (a *agent) sampleLoop(ctx context.Context) {
	tick := time.NewTicker(a.c.sample)
	defer tick.Stop()
	var last sample
	for {
		s := a.take()
		if !reflect.DeepEqual(s, last) {
			a.log.write(map[string]any{"event": "sample", "endpoints": s.Endpoints, "pods": s.Pods,
				"holder": s.Holder, "deployments": s.Deployments})
			last = s
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (a *agent) take() sample {
	s := sample{Endpoints: []endpoint{}, Pods: []podState{}, Deployments: []deployState{}}
	versions := map[string]string{}
	for _, o := range a.podInf.GetStore().List() {
		po := o.(*corev1.Pod)
		a.mu.Lock()
		p := a.pods[po.Name]
		a.mu.Unlock()
		if p == nil || p.uid != string(po.UID) {
			continue
		}
		versions[po.Name] = p.version
		if po.Status.Phase == corev1.PodSucceeded || po.Status.Phase == corev1.PodFailed {
			continue
		}
		ready := false
		for _, c := range po.Status.Conditions {
			ready = ready || (c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue)
		}
		s.Pods = append(s.Pods, podState{Pod: po.Name, Node: po.Spec.NodeName, Deployment: deploymentOf(po), Version: p.version, Role: p.role, Watchers: p.watchers,
			Ready: ready, Terminating: po.DeletionTimestamp != nil})
	}
	for _, o := range a.sliceInf.GetStore().List() {
		es := o.(*discoveryv1.EndpointSlice)
		if es.Labels[discoveryv1.LabelServiceName] != a.c.service {
			continue
		}
		for _, e := range es.Endpoints {
			if e.Conditions.Ready == nil || !*e.Conditions.Ready || e.TargetRef == nil {
				continue
			}
			s.Endpoints = append(s.Endpoints, endpoint{Pod: e.TargetRef.Name, Version: versions[e.TargetRef.Name]})
		}
	}
	for _, o := range a.leaseInf.GetStore().List() {
		l := o.(*coordinationv1.Lease)
		if l.Name != leaseName || l.Spec.HolderIdentity == nil {
			continue
		}
		// the identity is the pod's name, "_", a random suffix
		h := *l.Spec.HolderIdentity
		s.Holder = h[:max(0, strings.LastIndex(h, "_"))]
	}
	for _, o := range a.deployInf.GetStore().List() {
		d := o.(*appsv1.Deployment)
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		s.Deployments = append(s.Deployments, deployState{
			Name: d.Name, Generation: d.Generation, Replicas: want, Ready: st.ReadyReplicas, Updated: st.UpdatedReplicas, Total: st.Replicas,
			Complete: st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want &&
				st.AvailableReplicas == want && st.Replicas == want,
		})
	}
	sort.Slice(s.Endpoints, func(i, j int) bool { return s.Endpoints[i].Pod < s.Endpoints[j].Pod })
	sort.Slice(s.Pods, func(i, j int) bool { return s.Pods[i].Pod < s.Pods[j].Pod })
	sort.Slice(s.Deployments, func(i, j int) bool { return s.Deployments[i].Name < s.Deployments[j].Name })
	return s
}

// deploymentOf names the Deployment of a pod: its ReplicaSet's name
// without the pod-template hash the Deployment controller appends.
func deploymentOf(po *corev1.Pod) string {
	for _, ref := range po.OwnerReferences {
		if ref.Kind == "ReplicaSet" {
			if i := strings.LastIndex(ref.Name, "-"); i > 0 {
				return ref.Name[:i]
			}
		}
	}
	return ""
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func typesUID(uid string) types.UID { return types.UID(uid) }

func base64(data []byte) string { return stdbase64.StdEncoding.EncodeToString(data) }
