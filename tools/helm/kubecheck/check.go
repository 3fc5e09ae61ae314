package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Object is one decoded document of the stream.
type Object struct {
	Source string // the template it came from (helm's "# Source:" line), else "document N"
	GVK    schema.GroupVersionKind
	Name   string
	Obj    runtime.Object
}

func (o Object) String() string { return fmt.Sprintf("%s %s/%s", o.Source, o.GVK.Kind, o.Name) }

var sourceLine = regexp.MustCompile(`(?m)^# Source: (.+)$`)

// Check decodes every document of a multi-document YAML stream strictly
// into its typed Kubernetes object and checks the basics a cluster would
// refuse or a chart author would regret. It returns the objects it could
// decode and every problem found, each naming its template.
func Check(r io.Reader) ([]Object, []error) {
	var objs []Object
	var errs []error
	rd := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for n := 1; ; n++ {
		doc, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("document %d: %w", n, err))
			break
		}
		src := fmt.Sprintf("document %d", n)
		if m := sourceLine.FindSubmatch(doc); m != nil {
			src = string(bytes.TrimSpace(m[1]))
		}
		o, err := decode(doc, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if o == nil { // comments only
			continue
		}
		objs = append(objs, *o)
	}
	for _, o := range objs {
		for _, e := range checkObject(o) {
			errs = append(errs, fmt.Errorf("%s: %s", o, e))
		}
	}
	errs = append(errs, crossCheck(objs)...)
	return objs, errs
}

// decode turns one document into its typed object: an unknown apiVersion or
// kind, an unknown or duplicated field and a value of the wrong type all fail.
func decode(doc []byte, src string) (*Object, error) {
	var probe map[string]any
	if err := yaml.Unmarshal(doc, &probe); err != nil {
		return nil, fmt.Errorf("%s: not YAML: %w", src, err)
	}
	if probe == nil {
		return nil, nil
	}
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return nil, fmt.Errorf("%s: apiVersion/kind: %w", src, err)
	}
	if tm.APIVersion == "" || tm.Kind == "" {
		return nil, fmt.Errorf("%s: apiVersion and kind are required", src)
	}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("%s: apiVersion %q: %w", src, tm.APIVersion, err)
	}
	gvk := gv.WithKind(tm.Kind)
	obj, err := scheme.Scheme.New(gvk)
	if err != nil {
		return nil, fmt.Errorf("%s: unknown kind %s in %s (not a built-in Kubernetes type of this client)", src, tm.Kind, tm.APIVersion)
	}
	// YAMLToJSONStrict refuses a key given twice; the case-sensitive
	// decoder refuses what encoding/json would take (a field spelt in
	// another case) and names each unknown field by its path.
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", src, tm.Kind, err)
	}
	strict, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", src, tm.Kind, err)
	}
	if len(strict) > 0 {
		return nil, fmt.Errorf("%s: %s: %w", src, tm.Kind, errors.Join(strict...))
	}
	o := &Object{Source: src, GVK: gvk, Obj: obj}
	if m, ok := obj.(metav1.Object); ok {
		o.Name = m.GetName()
	}
	return o, nil
}

// checkObject checks one object on its own.
func checkObject(o Object) []string {
	var p problems
	m, ok := o.Obj.(metav1.Object)
	if !ok {
		return []string{"has no metadata"}
	}
	switch {
	case m.GetName() == "":
		p.add("metadata.name is required")
	case o.GVK.Kind == "Service":
		p.all("metadata.name", validation.IsDNS1035Label(m.GetName()))
	default:
		p.all("metadata.name", validation.IsDNS1123Subdomain(m.GetName()))
	}
	p.labels("metadata.labels", m.GetLabels())
	for k := range m.GetAnnotations() {
		p.all("metadata.annotations key "+k, validation.IsQualifiedName(k))
	}
	switch x := o.Obj.(type) {
	case *appsv1.Deployment:
		p.selector("spec.selector", x.Spec.Selector, x.Spec.Template.Labels)
		p.podTemplate("spec.template", x.Spec.Template)
	case *appsv1.StatefulSet:
		p.selector("spec.selector", x.Spec.Selector, x.Spec.Template.Labels)
		p.podTemplate("spec.template", x.Spec.Template)
	case *appsv1.DaemonSet:
		p.selector("spec.selector", x.Spec.Selector, x.Spec.Template.Labels)
		p.podTemplate("spec.template", x.Spec.Template)
	case *batchv1.Job:
		p.jobTemplate("spec.template", x.Spec.Template)
	case *batchv1.CronJob:
		if x.Spec.Schedule == "" {
			p.add("spec.schedule is required")
		}
		p.jobTemplate("spec.jobTemplate.spec.template", x.Spec.JobTemplate.Spec.Template)
	case *corev1.Pod:
		p.podSpec("spec", x.Spec)
	case *corev1.Service:
		p.service(x)
	case *networkingv1.Ingress:
		p.ingress(x)
	case *policyv1.PodDisruptionBudget:
		if x.Spec.Selector == nil {
			p.add("spec.selector is required")
		}
		if x.Spec.MinAvailable != nil && x.Spec.MaxUnavailable != nil {
			p.add("spec.minAvailable and spec.maxUnavailable are exclusive")
		}
	case *corev1.ConfigMap:
		for k := range x.Data {
			p.all("data key "+k, validation.IsConfigMapKey(k))
		}
	case *corev1.Secret:
		for k := range x.Data {
			p.all("data key "+k, validation.IsConfigMapKey(k))
		}
		for k := range x.StringData {
			p.all("stringData key "+k, validation.IsConfigMapKey(k))
		}
	}
	return p
}

type problems []string

func (p *problems) add(format string, args ...any) { *p = append(*p, fmt.Sprintf(format, args...)) }

func (p *problems) all(field string, msgs []string) {
	for _, m := range msgs {
		p.add("%s: %s", field, m)
	}
}

func (p *problems) labels(field string, l map[string]string) {
	for k, v := range l {
		p.all(field+" key "+k, validation.IsQualifiedName(k))
		p.all(field+" "+k, validation.IsValidLabelValue(v))
	}
}

func (p *problems) selector(field string, sel *metav1.LabelSelector, podLabels map[string]string) {
	if sel == nil || (len(sel.MatchLabels) == 0 && len(sel.MatchExpressions) == 0) {
		p.add("%s is required and must not be empty", field)
		return
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		p.add("%s: %v", field, err)
		return
	}
	if !s.Matches(labels.Set(podLabels)) {
		p.add("%s does not match the pod template's labels %v", field, podLabels)
	}
}

func (p *problems) jobTemplate(field string, t corev1.PodTemplateSpec) {
	if rp := t.Spec.RestartPolicy; rp != corev1.RestartPolicyNever && rp != corev1.RestartPolicyOnFailure {
		p.add("%s.spec.restartPolicy must be Never or OnFailure for a Job, got %q", field, rp)
	}
	p.podTemplate(field, t)
}

func (p *problems) podTemplate(field string, t corev1.PodTemplateSpec) {
	p.labels(field+".metadata.labels", t.Labels)
	p.podSpec(field+".spec", t.Spec)
}

func (p *problems) podSpec(field string, s corev1.PodSpec) {
	if len(s.Containers) == 0 {
		p.add("%s.containers: at least one container is required", field)
	}
	volumes := map[string]bool{}
	for i, v := range s.Volumes {
		f := fmt.Sprintf("%s.volumes[%d]", field, i)
		if v.Name == "" {
			p.add("%s.name is required", f)
		} else if volumes[v.Name] {
			p.add("%s.name %q is used twice", f, v.Name)
		}
		volumes[v.Name] = true
		if v.ConfigMap != nil && v.ConfigMap.Name == "" {
			p.add("%s.configMap.name is required", f)
		}
		if v.Secret != nil && v.Secret.SecretName == "" {
			p.add("%s.secret.secretName is required", f)
		}
	}
	names := map[string]bool{}
	each := func(kind string, cs []corev1.Container) {
		for i, c := range cs {
			f := fmt.Sprintf("%s.%s[%d]", field, kind, i)
			if c.Name == "" {
				p.add("%s.name is required", f)
			} else {
				p.all(f+".name", validation.IsDNS1123Label(c.Name))
				if names[c.Name] {
					p.add("%s.name %q is used twice", f, c.Name)
				}
				names[c.Name] = true
			}
			p.container(f, c, volumes)
		}
	}
	each("initContainers", s.InitContainers)
	each("containers", s.Containers)
	for i, ps := range s.ImagePullSecrets {
		if ps.Name == "" {
			p.add("%s.imagePullSecrets[%d].name is required", field, i)
		}
	}
}

func (p *problems) container(f string, c corev1.Container, volumes map[string]bool) {
	if strings.TrimSpace(c.Image) == "" {
		p.add("%s.image is required", f)
	} else if strings.ContainsAny(c.Image, " \t\n") || strings.HasSuffix(c.Image, ":") {
		p.add("%s.image %q is not an image reference", f, c.Image)
	}
	ports := map[string]bool{}
	for i, cp := range c.Ports {
		pf := fmt.Sprintf("%s.ports[%d]", f, i)
		p.all(pf+".containerPort", validation.IsValidPortNum(int(cp.ContainerPort)))
		if cp.Name != "" {
			p.all(pf+".name", validation.IsValidPortName(cp.Name))
			if ports[cp.Name] {
				p.add("%s.name %q is used twice", pf, cp.Name)
			}
			ports[cp.Name] = true
		}
	}
	probe := func(name string, pr *corev1.Probe) {
		if pr == nil {
			return
		}
		pf := f + "." + name
		n := 0
		if pr.HTTPGet != nil {
			n++
			p.port(pf+".httpGet.port", pr.HTTPGet.Port, ports)
			if pr.HTTPGet.Path != "" && !strings.HasPrefix(pr.HTTPGet.Path, "/") {
				p.add("%s.httpGet.path %q must start with /", pf, pr.HTTPGet.Path)
			}
		}
		if pr.TCPSocket != nil {
			n++
			p.port(pf+".tcpSocket.port", pr.TCPSocket.Port, ports)
		}
		if pr.Exec != nil {
			n++
			if len(pr.Exec.Command) == 0 {
				p.add("%s.exec.command is required", pf)
			}
		}
		if pr.GRPC != nil {
			n++
			p.all(pf+".grpc.port", validation.IsValidPortNum(int(pr.GRPC.Port)))
		}
		if n != 1 {
			p.add("%s must have exactly one handler (httpGet, tcpSocket, exec or grpc), has %d", pf, n)
		}
	}
	probe("livenessProbe", c.LivenessProbe)
	probe("readinessProbe", c.ReadinessProbe)
	probe("startupProbe", c.StartupProbe)
	for i, e := range c.Env {
		ef := fmt.Sprintf("%s.env[%d]", f, i)
		p.all(ef+".name", validation.IsEnvVarName(e.Name))
		if e.ValueFrom != nil {
			if e.Value != "" {
				p.add("%s: value and valueFrom are exclusive", ef)
			}
			if r := e.ValueFrom.SecretKeyRef; r != nil && (r.Name == "" || r.Key == "") {
				p.add("%s.valueFrom.secretKeyRef needs a name and a key", ef)
			}
			if r := e.ValueFrom.ConfigMapKeyRef; r != nil && (r.Name == "" || r.Key == "") {
				p.add("%s.valueFrom.configMapKeyRef needs a name and a key", ef)
			}
		}
	}
	for i, e := range c.EnvFrom {
		ef := fmt.Sprintf("%s.envFrom[%d]", f, i)
		switch {
		case e.ConfigMapRef != nil && e.SecretRef != nil:
			p.add("%s: configMapRef and secretRef are exclusive", ef)
		case e.ConfigMapRef != nil && e.ConfigMapRef.Name == "":
			p.add("%s.configMapRef.name is required", ef)
		case e.SecretRef != nil && e.SecretRef.Name == "":
			p.add("%s.secretRef.name is required", ef)
		case e.ConfigMapRef == nil && e.SecretRef == nil:
			p.add("%s needs a configMapRef or a secretRef", ef)
		}
	}
	for i, vm := range c.VolumeMounts {
		vf := fmt.Sprintf("%s.volumeMounts[%d]", f, i)
		if !volumes[vm.Name] {
			p.add("%s: no volume named %q in the pod", vf, vm.Name)
		}
		if !strings.HasPrefix(vm.MountPath, "/") {
			p.add("%s.mountPath %q must be an absolute path", vf, vm.MountPath)
		}
	}
}

// port checks a probe's or a Service's port: a number in range, or the name
// of one of the container's ports.
func (p *problems) port(field string, v intstr.IntOrString, named map[string]bool) {
	if v.Type == intstr.Int {
		p.all(field, validation.IsValidPortNum(v.IntValue()))
		return
	}
	if v.StrVal == "" {
		p.add("%s is required", field)
	} else if !named[v.StrVal] {
		p.add("%s: the container has no port named %q", field, v.StrVal)
	}
}

func (p *problems) service(s *corev1.Service) {
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		if s.Spec.ExternalName == "" {
			p.add("spec.externalName is required for type ExternalName")
		}
		return
	}
	if len(s.Spec.Ports) == 0 {
		p.add("spec.ports: at least one port is required")
	}
	names := map[string]bool{}
	for i, sp := range s.Spec.Ports {
		f := fmt.Sprintf("spec.ports[%d]", i)
		p.all(f+".port", validation.IsValidPortNum(int(sp.Port)))
		if len(s.Spec.Ports) > 1 && sp.Name == "" {
			p.add("%s.name is required when a Service has several ports", f)
		}
		if names[sp.Name] {
			p.add("%s.name %q is used twice", f, sp.Name)
		}
		names[sp.Name] = true
		if sp.TargetPort.Type == intstr.Int && sp.TargetPort.IntVal != 0 {
			p.all(f+".targetPort", validation.IsValidPortNum(int(sp.TargetPort.IntVal)))
		}
	}
}

func (p *problems) ingress(in *networkingv1.Ingress) {
	if len(in.Spec.Rules) == 0 && in.Spec.DefaultBackend == nil {
		p.add("spec: a rule or a defaultBackend is required")
	}
	for i, r := range in.Spec.Rules {
		if r.HTTP == nil {
			continue
		}
		for j, path := range r.HTTP.Paths {
			f := fmt.Sprintf("spec.rules[%d].http.paths[%d]", i, j)
			if path.PathType == nil {
				p.add("%s.pathType is required", f)
			}
			if path.Backend.Service == nil || path.Backend.Service.Name == "" {
				p.add("%s.backend.service.name is required", f)
			}
		}
	}
}

// pods is one pod template of the stream with the object it belongs to.
type pods struct {
	owner  Object
	labels labels.Set
	spec   corev1.PodSpec
}

func podTemplates(objs []Object) []pods {
	var out []pods
	for _, o := range objs {
		var t *corev1.PodTemplateSpec
		switch x := o.Obj.(type) {
		case *appsv1.Deployment:
			t = &x.Spec.Template
		case *appsv1.StatefulSet:
			t = &x.Spec.Template
		case *appsv1.DaemonSet:
			t = &x.Spec.Template
		case *batchv1.Job:
			t = &x.Spec.Template
		case *batchv1.CronJob:
			t = &x.Spec.JobTemplate.Spec.Template
		case *corev1.Pod:
			out = append(out, pods{owner: o, labels: x.Labels, spec: x.Spec})
		}
		if t != nil {
			out = append(out, pods{owner: o, labels: t.Labels, spec: t.Spec})
		}
	}
	return out
}

// crossCheck checks what objects say of each other: names are unique per
// kind, a Service or a PodDisruptionBudget selects pods of the stream and
// its named target ports exist there, an Ingress routes to a Service and
// port of the stream, and a ConfigMap a pod reads is in the stream.
func crossCheck(objs []Object) []error {
	var errs []error
	seen := map[string]Object{}
	configMaps := map[string]bool{}
	services := map[string]*corev1.Service{}
	for _, o := range objs {
		key := o.GVK.GroupKind().String() + "/" + o.Name
		if first, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("%s: the same %s name as %s", o, o.GVK.Kind, first.Source))
		}
		seen[key] = o
		switch x := o.Obj.(type) {
		case *corev1.ConfigMap:
			configMaps[x.Name] = true
		case *corev1.Service:
			services[x.Name] = x
		}
	}
	all := podTemplates(objs)
	selected := func(sel labels.Selector) []pods {
		var out []pods
		for _, pt := range all {
			if sel.Matches(pt.labels) {
				out = append(out, pt)
			}
		}
		return out
	}
	for _, o := range objs {
		switch x := o.Obj.(type) {
		case *corev1.Service:
			if x.Spec.Type == corev1.ServiceTypeExternalName || len(x.Spec.Selector) == 0 {
				continue
			}
			matched := selected(labels.SelectorFromSet(x.Spec.Selector))
			if len(matched) == 0 {
				errs = append(errs, fmt.Errorf("%s: spec.selector %v selects no pod template of the chart", o, x.Spec.Selector))
				continue
			}
			for i, sp := range x.Spec.Ports {
				if sp.TargetPort.Type != intstr.String {
					continue
				}
				for _, pt := range matched {
					if !hasPortName(pt.spec, sp.TargetPort.StrVal) {
						errs = append(errs, fmt.Errorf("%s: spec.ports[%d].targetPort %q is no container port of %s", o, i, sp.TargetPort.StrVal, pt.owner))
					}
				}
			}
		case *policyv1.PodDisruptionBudget:
			if x.Spec.Selector == nil {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(x.Spec.Selector)
			if err == nil && len(selected(sel)) == 0 {
				errs = append(errs, fmt.Errorf("%s: spec.selector selects no pod template of the chart", o))
			}
		case *networkingv1.Ingress:
			for _, r := range x.Spec.Rules {
				if r.HTTP == nil {
					continue
				}
				for _, path := range r.HTTP.Paths {
					b := path.Backend.Service
					if b == nil || b.Name == "" {
						continue
					}
					svc, ok := services[b.Name]
					if !ok {
						errs = append(errs, fmt.Errorf("%s: backend Service %q is not in the chart", o, b.Name))
						continue
					}
					if !servicePort(svc, b.Port) {
						errs = append(errs, fmt.Errorf("%s: Service %q has no port %s", o, b.Name, portText(b.Port)))
					}
				}
			}
		}
	}
	for _, pt := range all {
		for _, name := range configMapRefs(pt.spec) {
			if !configMaps[name] {
				errs = append(errs, fmt.Errorf("%s: reads ConfigMap %q, which is not in the chart", pt.owner, name))
			}
		}
	}
	return errs
}

func hasPortName(s corev1.PodSpec, name string) bool {
	for _, c := range s.Containers {
		for _, p := range c.Ports {
			if p.Name == name {
				return true
			}
		}
	}
	return false
}

func servicePort(s *corev1.Service, p networkingv1.ServiceBackendPort) bool {
	for _, sp := range s.Spec.Ports {
		if (p.Name != "" && sp.Name == p.Name) || (p.Name == "" && sp.Port == p.Number) {
			return true
		}
	}
	return false
}

func portText(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return fmt.Sprintf("named %q", p.Name)
	}
	return fmt.Sprint(p.Number)
}

// configMapRefs lists the ConfigMaps a pod must find (optional ones aside).
func configMapRefs(s corev1.PodSpec) []string {
	set := map[string]bool{}
	for _, v := range s.Volumes {
		if v.ConfigMap != nil && (v.ConfigMap.Optional == nil || !*v.ConfigMap.Optional) {
			set[v.ConfigMap.Name] = true
		}
	}
	for _, c := range append(append([]corev1.Container{}, s.InitContainers...), s.Containers...) {
		for _, e := range c.EnvFrom {
			if r := e.ConfigMapRef; r != nil && (r.Optional == nil || !*r.Optional) {
				set[r.Name] = true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil {
				if r := e.ValueFrom.ConfigMapKeyRef; r != nil && (r.Optional == nil || !*r.Optional) {
					set[r.Name] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
