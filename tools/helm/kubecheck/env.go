package main

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ContainerEnv is the environment Kubernetes gives one container of the
// stream, as NAME=VALUE in its order: envFrom first (ConfigMap data, then
// Secret data), then env, a later name replacing an earlier one. A
// valueFrom that names a ConfigMap or a Secret is read from the stream;
// any other valueFrom (fieldRef, resourceFieldRef) has no value before the
// pod exists and is left out. ref is Kind/name/container of a workload.
func ContainerEnv(objs []Object, ref string) ([]string, error) {
	kind, rest, ok1 := strings.Cut(ref, "/")
	name, container, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 || kind == "" || name == "" || container == "" {
		return nil, fmt.Errorf("-env wants Kind/name/container, got %q", ref)
	}
	configMaps := map[string]map[string]string{}
	secrets := map[string]map[string]string{}
	for _, o := range objs {
		switch x := o.Obj.(type) {
		case *corev1.ConfigMap:
			configMaps[x.Name] = x.Data
		case *corev1.Secret:
			data := map[string]string{}
			for k, v := range x.Data {
				data[k] = string(v)
			}
			for k, v := range x.StringData {
				data[k] = v
			}
			secrets[x.Name] = data
		}
	}
	var c *corev1.Container
	for _, pt := range podTemplates(objs) {
		if pt.owner.GVK.Kind != kind || pt.owner.Name != name {
			continue
		}
		for i := range pt.spec.Containers {
			if pt.spec.Containers[i].Name == container {
				c = &pt.spec.Containers[i]
			}
		}
	}
	if c == nil {
		return nil, fmt.Errorf("no container %q in %s %s of the stream", container, kind, name)
	}
	var order []string
	env := map[string]string{}
	set := func(k, v string) {
		if _, seen := env[k]; !seen {
			order = append(order, k)
		}
		env[k] = v
	}
	lookup := func(what string, from map[string]map[string]string, obj string) (map[string]string, error) {
		data, ok := from[obj]
		if !ok {
			return nil, fmt.Errorf("%s %s/%s reads %s %q, which is not in the stream", kind, name, container, what, obj)
		}
		return data, nil
	}
	for _, ef := range c.EnvFrom {
		var data map[string]string
		var err error
		switch {
		case ef.ConfigMapRef != nil:
			data, err = lookup("ConfigMap", configMaps, ef.ConfigMapRef.Name)
		case ef.SecretRef != nil:
			data, err = lookup("Secret", secrets, ef.SecretRef.Name)
		}
		if err != nil {
			return nil, err
		}
		for _, k := range sortedKeys(data) {
			set(ef.Prefix+k, data[k])
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, e.Value)
			continue
		}
		var data map[string]string
		var key string
		var err error
		switch {
		case e.ValueFrom.ConfigMapKeyRef != nil:
			data, err = lookup("ConfigMap", configMaps, e.ValueFrom.ConfigMapKeyRef.Name)
			key = e.ValueFrom.ConfigMapKeyRef.Key
		case e.ValueFrom.SecretKeyRef != nil:
			data, err = lookup("Secret", secrets, e.ValueFrom.SecretKeyRef.Name)
			key = e.ValueFrom.SecretKeyRef.Key
		default:
			continue
		}
		if err != nil {
			return nil, err
		}
		v, ok := data[key]
		if !ok {
			return nil, fmt.Errorf("%s %s/%s: env %s reads key %q, which its source lacks", kind, name, container, e.Name, key)
		}
		set(e.Name, v)
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
