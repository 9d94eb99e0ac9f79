// monitoring-check: the real Go libraries the monitoring tests judge meshgate's output with, next to promtool.
//
//	monitoring-check expfmt  < metrics.txt   parses Prometheus' text exposition format with
//	                                          github.com/prometheus/common/expfmt (the reference parser) and
//	                                          prints the families as JSON; a parse error exits 1 naming the line.
//	monitoring-check crd     < objects.yaml  decodes each YAML document strictly (unknown fields are errors) into
//	                                          the Prometheus Operator's own Go types (ServiceMonitor, PodMonitor,
//	                                          PrometheusRule, monitoring.coreos.com/v1) and prints one line per
//	                                          object; any other kind, or a field the type does not have, exits 1.
//
// The Operator's CRDs are not installed in the test clusters; its Go types are what its CRDs are generated from.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"
)

type series struct {
	Labels map[string]string `json:"labels"`
	// Value of a counter, gauge or untyped sample; the sample count of a histogram or summary.
	Value float64 `json:"value"`
	// Upper bounds of a histogram's buckets, in order, as Prometheus writes them ("0.005", "+Inf": JSON has no Inf).
	Buckets []string `json:"buckets,omitempty"`
}

type family struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Help   string   `json:"help"`
	Series []series `json:"series"`
}

func parseExposition(in io.Reader) ([]family, error) {
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(in)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(families))
	for name := range families {
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]family, 0, len(names))
	for _, name := range names {
		mf := families[name]
		f := family{Name: name, Type: strings.ToLower(mf.GetType().String()), Help: mf.GetHelp(), Series: []series{}}
		for _, m := range mf.GetMetric() {
			s := series{Labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.Labels[l.GetName()] = l.GetValue()
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				s.Value = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				s.Value = m.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				s.Value = float64(m.GetHistogram().GetSampleCount())
				for _, b := range m.GetHistogram().GetBucket() {
					s.Buckets = append(s.Buckets, model.FloatString(b.GetUpperBound()).String())
				}
			case dto.MetricType_SUMMARY:
				s.Value = float64(m.GetSummary().GetSampleCount())
			default:
				s.Value = m.GetUntyped().GetValue()
			}
			f.Series = append(f.Series, s)
		}
		out = append(out, f)
	}
	return out, nil
}

// decodeStrict fills obj from one YAML document and refuses fields obj's type does not have.
func decodeStrict(doc []byte, obj any) error {
	return yaml.UnmarshalStrict(doc, obj)
}

func checkObjects(in io.Reader) ([]string, error) {
	data, err := io.ReadAll(in)
	if err != nil {
		return nil, err
	}
	var lines []string
	for i, doc := range bytes.Split(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if meta.APIVersion != "monitoring.coreos.com/v1" {
			return nil, fmt.Errorf("document %d: apiVersion %q is not monitoring.coreos.com/v1", i, meta.APIVersion)
		}
		var name string
		switch meta.Kind {
		case "ServiceMonitor":
			var o monitoringv1.ServiceMonitor
			err, name = decodeStrict(doc, &o), o.Name
		case "PodMonitor":
			var o monitoringv1.PodMonitor
			err, name = decodeStrict(doc, &o), o.Name
		case "PrometheusRule":
			var o monitoringv1.PrometheusRule
			err, name = decodeStrict(doc, &o), o.Name
		default:
			return nil, fmt.Errorf("document %d: kind %q is not one this tool knows", i, meta.Kind)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i, meta.Kind, err)
		}
		lines = append(lines, fmt.Sprintf("%s/%s ok", meta.Kind, name))
	}
	return lines, nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: monitoring-check expfmt|crd < input")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "expfmt":
		families, err := parseExposition(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "monitoring-check expfmt: %v\n", err)
			os.Exit(1)
		}
		if err := json.NewEncoder(os.Stdout).Encode(families); err != nil {
			fmt.Fprintf(os.Stderr, "monitoring-check expfmt: %v\n", err)
			os.Exit(1)
		}
	case "crd":
		lines, err := checkObjects(os.Stdin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "monitoring-check crd: %v\n", err)
			os.Exit(1)
		}
		fmt.Println(strings.Join(lines, "\n"))
	default:
		fmt.Fprintf(os.Stderr, "monitoring-check: unknown command %q (expfmt, crd)\n", os.Args[1])
		os.Exit(2)
	}
}
