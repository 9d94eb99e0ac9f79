// Command multus-oracle runs multus-cni's own code (v4.2.3) on files a test laid out, so test/cni/multus.test.ts
// can compare meshgate's reading of Multus (src/cni/multus.ts) with Multus'. Two commands, JSON on stdin and stdout:
//
//	resolve   [{id, conf, pod?: {namespace, networks?, defaultNetwork?}, nads?: [{namespace, name, config?}]}]
//	          conf: the Multus plugin configuration as the runtime hands it to Multus (its stdin bytes). Runs
//	          types.LoadNetConf; with clusterNetwork, k8sclient.GetDefaultNetworks (a fake API holding only `nads`,
//	          so a network name falls through to Multus' file lookup as on a cluster without such a
//	          NetworkAttachmentDefinition); with a pod, k8sclient.TryLoadPodDelegates (its networks annotations).
//	          Answers, per case: the plugin types of each delegate in the order Multus runs them, as
//	          multus.DelegateAdd would (conflistAdd: the loaded list, else libcni.NetworkConfFromBytes; confAdd:
//	          libcni.ConfFromBytes), or the error.
//	generate  {daemonConfig}: the thick plugin's shim configuration, as the multus-daemon writes 00-multus.conf:
//	          config.ParseMultusConfig of the daemon config file, config.NewManager (which finds the primary
//	          network in multusAutoconfigDir), Manager.GenerateConfig.
//
// Nothing here is a reimplementation: every decision is multus-cni's (and its libcni's).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/containernetworking/cni/libcni"
	netv1 "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/apis/k8s.cni.cncf.io/v1"
	netfake "github.com/k8snetworkplumbingwg/network-attachment-definition-client/pkg/client/clientset/versioned/fake"
	"gopkg.in/k8snetworkplumbingwg/multus-cni.v4/pkg/k8sclient"
	"gopkg.in/k8snetworkplumbingwg/multus-cni.v4/pkg/logging"
	"gopkg.in/k8snetworkplumbingwg/multus-cni.v4/pkg/server/config"
	"gopkg.in/k8snetworkplumbingwg/multus-cni.v4/pkg/types"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

type nad struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Config    string `json:"config,omitempty"`
}

type pod struct {
	Namespace      string `json:"namespace"`
	Networks       string `json:"networks,omitempty"`
	DefaultNetwork string `json:"defaultNetwork,omitempty"`
}

type resolveCase struct {
	ID   string `json:"id"`
	Conf string `json:"conf"`
	Pod  *pod   `json:"pod,omitempty"`
	NADs []nad  `json:"nads,omitempty"`
}

type delegate struct {
	Name    string   `json:"name"`
	Plugins []string `json:"plugins"`
}

type resolved struct {
	ID        string     `json:"id"`
	Error     string     `json:"error,omitempty"`
	Delegates []delegate `json:"delegates,omitempty"`
}

func main() {
	logging.SetLogLevel("panic")
	logging.SetLogStderr(false)
	if len(os.Args) != 2 {
		fail("usage: multus-oracle resolve|generate < input.json")
	}
	var out any
	switch os.Args[1] {
	case "resolve":
		var cases []resolveCase
		decode(&cases)
		results := make([]resolved, 0, len(cases))
		for _, c := range cases {
			results = append(results, resolve(c))
		}
		out = results
	case "generate":
		var in struct {
			DaemonConfig string `json:"daemonConfig"`
		}
		decode(&in)
		out = generate(in.DaemonConfig)
	default:
		fail("unknown command " + os.Args[1])
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err.Error())
	}
}

func resolve(c resolveCase) resolved {
	r := resolved{ID: c.ID}
	conf, err := types.LoadNetConf([]byte(c.Conf))
	if err != nil {
		r.Error = err.Error()
		return r
	}
	client := &k8sclient.ClientInfo{Client: fake.NewSimpleClientset(), NetClient: netfake.NewSimpleClientset()}
	for _, n := range c.NADs {
		obj := &netv1.NetworkAttachmentDefinition{
			ObjectMeta: metav1.ObjectMeta{Namespace: n.Namespace, Name: n.Name},
			Spec:       netv1.NetworkAttachmentDefinitionSpec{Config: n.Config},
		}
		_, err := client.NetClient.K8sCniCncfIoV1().NetworkAttachmentDefinitions(n.Namespace).Create(context.TODO(), obj, metav1.CreateOptions{})
		if err != nil {
			fail(err.Error())
		}
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pod", Namespace: "default", UID: "uid", Annotations: map[string]string{}}}
	if c.Pod != nil {
		p.Namespace = c.Pod.Namespace
		if c.Pod.Networks != "" {
			p.Annotations["k8s.v1.cni.cncf.io/networks"] = c.Pod.Networks
		}
		if c.Pod.DefaultNetwork != "" {
			p.Annotations["v1.multus-cni.io/default-network"] = c.Pod.DefaultNetwork
		}
	}
	// As multus.CmdAdd: the cluster network first (only with clusterNetwork), then the pod's own selections.
	if conf.ClusterNetwork != "" {
		if _, err := k8sclient.GetDefaultNetworks(p, conf, client, nil); err != nil {
			r.Error = err.Error()
			return r
		}
	}
	if c.Pod != nil {
		if _, _, err := k8sclient.TryLoadPodDelegates(p, conf, client, nil); err != nil {
			r.Error = err.Error()
			return r
		}
	}
	for _, d := range conf.Delegates {
		plugins, err := runs(d)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		r.Delegates = append(r.Delegates, delegate{Name: d.Name, Plugins: plugins})
	}
	return r
}

// runs: the plugin types multus.DelegateAdd would run for a delegate (conflistAdd / confAdd).
func runs(d *types.DelegateNetConf) ([]string, error) {
	if d.ConfListPlugin {
		list := &d.CNINetworkConfigList
		if len(list.Plugins) == 0 {
			parsed, err := libcni.NetworkConfFromBytes(d.Bytes)
			if err != nil {
				return nil, fmt.Errorf("conflistAdd: error converting the raw bytes into a conflist: %v", err)
			}
			list = parsed
		}
		out := []string{}
		for _, p := range list.Plugins {
			out = append(out, p.Network.Type)
		}
		return out, nil
	}
	conf, err := libcni.ConfFromBytes(d.Bytes)
	if err != nil {
		return nil, fmt.Errorf("confAdd: error converting the raw bytes into a conf: %v", err)
	}
	return []string{conf.Network.Type}, nil
}

func generate(path string) map[string]string {
	conf, err := config.ParseMultusConfig(path)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	manager, err := config.NewManager(*conf)
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	generated, err := manager.GenerateConfig()
	if err != nil {
		return map[string]string{"error": err.Error()}
	}
	return map[string]string{"config": generated}
}

func decode(v any) {
	if err := json.NewDecoder(os.Stdin).Decode(v); err != nil {
		fail("reading stdin: " + err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "multus-oracle:", msg)
	os.Exit(2)
}
