package main

import (
	"bytes"
	"strings"
	"testing"
)

// good is a small chart's output: a ConfigMap, a Deployment reading it, a
// Service and an Ingress in front of it, a hook Job and a PDB.
const good = `---
# Source: guilds/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  GUILDS_LOG_LEVEL: "info"
---
# Source: guilds/templates/api-deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-api
  labels: {app.kubernetes.io/component: api}
  annotations: {helm.sh/hook-weight: "0"}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web, component: api}
  template:
    metadata:
      labels: {app: web, component: api}
    spec:
      containers:
        - name: api
          image: "guilds:0.1.0"
          args: ["serve"]
          ports:
            - {name: http, containerPort: 8080, protocol: TCP}
          envFrom:
            - configMapRef: {name: web-config}
            - secretRef: {name: web-secret}
          livenessProbe:
            httpGet: {path: /healthz, port: http}
          readinessProbe:
            httpGet: {path: /readyz, port: 8080}
          resources:
            requests: {cpu: 100m, memory: 128Mi}
          volumeMounts:
            - {name: tmp, mountPath: /tmp}
      volumes:
        - name: tmp
          emptyDir: {}
---
# Source: guilds/templates/api-service.yaml
apiVersion: v1
kind: Service
metadata:
  name: web-api
spec:
  selector: {app: web, component: api}
  ports:
    - {name: http, port: 80, targetPort: http}
---
# Source: guilds/templates/api-ingress.yaml
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: web-api
spec:
  rules:
    - host: guilds.example.com
      http:
        paths:
          - path: /
            pathType: Prefix
            backend:
              service: {name: web-api, port: {name: http}}
---
# Source: guilds/templates/pdb.yaml
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web-api
spec:
  minAvailable: 1
  selector:
    matchLabels: {component: api}
---
# Source: guilds/templates/migrate-job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: web-migrate
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: guilds:0.1.0
          args: [migrate, up]
          env:
            - name: DATABASE_URL
              valueFrom:
                secretKeyRef: {name: web-migrate, key: DATABASE_URL}
`

func TestGoodStreamPasses(t *testing.T) {
	objs, errs := Check(strings.NewReader(good))
	for _, e := range errs {
		t.Error(e)
	}
	if len(objs) != 6 {
		t.Fatalf("decoded %d objects, want 6", len(objs))
	}
	if objs[1].Source != "guilds/templates/api-deployment.yaml" || objs[1].Name != "web-api" {
		t.Errorf("second object is %s", objs[1])
	}
}

// replace returns good with one exact piece changed; the test fails when
// the piece is not there, so a case cannot silently test nothing.
func replace(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(good, old) != 1 {
		t.Fatalf("%q occurs %d times in the good stream", old, strings.Count(good, old))
	}
	return strings.Replace(good, old, new, 1)
}

func TestBrokenManifestsFail(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown field", "  replicas: 2\n", "  replica: 2\n", `unknown field "spec.replica"`},
		{"unknown field in a container", "          args: [\"serve\"]\n", "          argz: [\"serve\"]\n", `unknown field "spec.template.spec.containers[0].argz"`},
		{"field in another case", "  replicas: 2\n", "  Replicas: 2\n", `unknown field "spec.Replicas"`},
		{"wrong type", "  replicas: 2\n", "  replicas: two\n", "cannot unmarshal string"},
		{"quoted number", "  replicas: 2\n", "  replicas: \"2\"\n", "cannot unmarshal string"},
		{"duplicate field", "  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", `"replicas" already set`},
		{"unknown kind", "kind: Deployment\n", "kind: Deploymint\n", "unknown kind Deploymint in apps/v1"},
		{"unknown apiVersion", "apiVersion: apps/v1\n", "apiVersion: apps/v1beta9\n", "unknown kind Deployment in apps/v1beta9"},
		{"no kind", "apiVersion: batch/v1\nkind: Job\n", "apiVersion: batch/v1\n", "apiVersion and kind are required"},
		{"no name", "  name: web-migrate\nspec:", "  labels: {a: b}\nspec:", "metadata.name is required"},
		{"bad name", "  name: web-config\n", "  name: Web_Config\n", "metadata.name"},
		{"no image", "          image: \"guilds:0.1.0\"\n", "", "containers[0].image is required"},
		{"empty image", "          image: guilds:0.1.0\n", "          image: \"\"\n", "containers[0].image is required"},
		{"image with no tag after colon", "          image: guilds:0.1.0\n", "          image: \"guilds:\"\n", "is not an image reference"},
		{"no containers", "      containers:\n        - name: migrate\n          image: guilds:0.1.0\n          args: [migrate, up]\n", "      containers: []\n      initContainers:\n        - name: migrate\n          image: guilds:0.1.0\n          args: [migrate, up]\n", "at least one container is required"},
		{"port out of range", "containerPort: 8080", "containerPort: 80800", "containerPort"},
		{"port zero", "containerPort: 8080", "containerPort: 0", "containerPort"},
		{"probe names a missing port", "httpGet: {path: /healthz, port: http}", "httpGet: {path: /healthz, port: web}", `the container has no port named "web"`},
		{"probe path", "httpGet: {path: /readyz, port: 8080}", "httpGet: {path: readyz, port: 8080}", "must start with /"},
		{"selector misses the pods", "    matchLabels: {app: web, component: api}\n", "    matchLabels: {app: web, component: worker}\n", "does not match the pod template's labels"},
		{"service selects nothing", "  selector: {app: web, component: api}\n", "  selector: {app: other}\n", "selects no pod template"},
		{"service target port", "targetPort: http}", "targetPort: https}", `targetPort "https" is no container port`},
		{"service without ports", "    - {name: http, port: 80, targetPort: http}\n", "    []\n", "at least one port is required"},
		{"ingress to a missing service", "service: {name: web-api, port: {name: http}}", "service: {name: web-app, port: {name: http}}", `backend Service "web-app" is not in the chart`},
		{"ingress to a missing port", "service: {name: web-api, port: {name: http}}", "service: {name: web-api, port: {number: 8080}}", "has no port 8080"},
		{"pdb selects nothing", "    matchLabels: {component: api}\n", "    matchLabels: {component: nothing}\n", "selects no pod template"},
		{"missing configmap", "            - configMapRef: {name: web-config}\n", "            - configMapRef: {name: web-conf}\n", `reads ConfigMap "web-conf"`},
		{"job restart policy", "      restartPolicy: Never\n", "      restartPolicy: Always\n", "restartPolicy must be Never or OnFailure"},
		{"volume mount without volume", "            - {name: tmp, mountPath: /tmp}\n", "            - {name: data, mountPath: /tmp}\n", `no volume named "data"`},
		{"env var name", "            - name: DATABASE_URL\n", "            - name: DATABASE URL\n", "env[0].name"},
		{"secret ref without key", "secretKeyRef: {name: web-migrate, key: DATABASE_URL}", "secretKeyRef: {name: web-migrate}", "needs a name and a key"},
		{"bad label value", "labels: {app.kubernetes.io/component: api}", "labels: {app.kubernetes.io/component: \"a b\"}", "metadata.labels"},
		{"quantity", "cpu: 100m", "cpu: lots", "quantities must match"},
		{"duplicate name", "kind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  GUILDS_LOG_LEVEL: \"info\"\n", "kind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  GUILDS_LOG_LEVEL: \"info\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n", "the same ConfigMap name"},
		{"not yaml", "kind: ConfigMap\n", "kind: [ConfigMap\n", "not YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errs := Check(strings.NewReader(replace(t, c.old, c.new)))
			if len(errs) == 0 {
				t.Fatalf("no problem found; want one containing %q", c.want)
			}
			var all []string
			for _, e := range errs {
				all = append(all, e.Error())
			}
			if !strings.Contains(strings.Join(all, "\n"), c.want) {
				t.Fatalf("problems do not mention %q:\n%s", c.want, strings.Join(all, "\n"))
			}
		})
	}
}

func TestRunExitCodes(t *testing.T) {
	var out, errw bytes.Buffer
	if code := run([]string{"-expect", "Deployment=1,Job=1,Secret=0"}, strings.NewReader(good), &out, &errw); code != 0 {
		t.Fatalf("good stream: exit %d, stderr %s", code, errw.String())
	}
	if !strings.Contains(out.String(), "6 objects ok") {
		t.Errorf("stdout %q", out.String())
	}
	errw.Reset()
	if code := run([]string{"-expect", "Deployment=2"}, strings.NewReader(good), &out, &errw); code != 1 {
		t.Fatalf("wrong count: exit %d", code)
	}
	if !strings.Contains(errw.String(), "expected 2 Deployment object(s), found 1") {
		t.Errorf("stderr %q", errw.String())
	}
	errw.Reset()
	if code := run(nil, strings.NewReader(strings.Replace(good, "replicas: 2", "replica: 2", 1)), &out, &errw); code != 1 {
		t.Fatalf("broken stream: exit %d", code)
	}
	if !strings.Contains(errw.String(), "guilds/templates/api-deployment.yaml") {
		t.Errorf("the problem does not name its template: %q", errw.String())
	}
	if code := run([]string{"-expect", "Deployment"}, strings.NewReader(good), &out, &errw); code != 2 {
		t.Fatalf("bad -expect: exit %d", code)
	}
}

func TestContainerEnv(t *testing.T) {
	stream := good + `---
apiVersion: v1
kind: Secret
metadata:
  name: web-secret
data:
  DATABASE_URL: cG9zdGdyZXM6Ly94QGRiL3g=
  GUILDS_LOG_LEVEL: ZGVidWc=
`
	objs, errs := Check(strings.NewReader(stream))
	for _, e := range errs {
		t.Fatal(e)
	}
	env, err := ContainerEnv(objs, "Deployment/web-api/api")
	if err != nil {
		t.Fatal(err)
	}
	// The Secret comes after the ConfigMap in envFrom: its GUILDS_LOG_LEVEL wins.
	if got, want := strings.Join(env, " "), "GUILDS_LOG_LEVEL=debug DATABASE_URL=postgres://x@db/x"; got != want {
		t.Fatalf("env %q, want %q", got, want)
	}
	if _, err := ContainerEnv(objs, "Job/web-migrate/migrate"); err == nil || !strings.Contains(err.Error(), `Secret "web-migrate", which is not in the stream`) {
		t.Fatalf("a secretKeyRef to a Secret outside the stream: %v", err)
	}
	if _, err := ContainerEnv(objs, "Deployment/web-api/worker"); err == nil {
		t.Fatal("a container that is not there has an environment")
	}
	var out, errw bytes.Buffer
	if code := run([]string{"-env", "Deployment/web-api/api"}, strings.NewReader(stream), &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if out.String() != "GUILDS_LOG_LEVEL=debug\x00DATABASE_URL=postgres://x@db/x\x00" {
		t.Fatalf("stdout %q", out.String())
	}
}
