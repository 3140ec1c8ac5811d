package main

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// metricsHandler serves what reader collects at each request in the
// Prometheus text format (0.0.4), as the OpenTelemetry Prometheus exporter
// names it: dots become underscores, the unit "s" a _seconds suffix,
// counters end in _total; no resource or scope labels. A host with
// Prometheus would register go.opentelemetry.io/otel/exporters/prometheus
// instead; the example writes the format itself so that the library's
// module requires no Prometheus client.
func metricsHandler(reader *sdkmetric.ManualReader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(r.Context(), &rm); err != nil {
			http.Error(w, "collecting the metrics failed", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(exposition(rm))
	})
}

// sample is one line of a metric family: a name suffix, its labels and
// its value.
type sample struct {
	suffix string
	labels []string // name="value", in the order written
	value  string
}

type family struct {
	name, help, kind string
	samples          []sample
}

// exposition writes rm's metrics, one family a name, sorted by name.
func exposition(rm metricdata.ResourceMetrics) []byte {
	var families []family
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if f := familyOf(m); len(f.samples) > 0 {
				families = append(families, f)
			}
		}
	}
	slices.SortFunc(families, func(a, b family) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for _, f := range families {
		b.WriteString("# HELP " + f.name + " " + helpEscaper.Replace(f.help) + "\n")
		b.WriteString("# TYPE " + f.name + " " + f.kind + "\n")
		for _, s := range f.samples {
			b.WriteString(f.name + s.suffix)
			if len(s.labels) > 0 {
				b.WriteString("{" + strings.Join(s.labels, ",") + "}")
			}
			b.WriteString(" " + s.value + "\n")
		}
	}
	return []byte(b.String())
}

func familyOf(m metricdata.Metrics) family {
	f := family{name: promName(m.Name, m.Unit), help: m.Description}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		f.kind, f.samples = sumKind(&f.name, d.IsMonotonic), points(d.DataPoints)
	case metricdata.Sum[float64]:
		f.kind, f.samples = sumKind(&f.name, d.IsMonotonic), points(d.DataPoints)
	case metricdata.Gauge[int64]:
		f.kind, f.samples = "gauge", points(d.DataPoints)
	case metricdata.Gauge[float64]:
		f.kind, f.samples = "gauge", points(d.DataPoints)
	case metricdata.Histogram[int64]:
		f.kind, f.samples = "histogram", histogram(d.DataPoints)
	case metricdata.Histogram[float64]:
		f.kind, f.samples = "histogram", histogram(d.DataPoints)
	}
	return f
}

// sumKind is a counter (named …_total) for a monotonic sum, a gauge
// otherwise (an up-down counter).
func sumKind(name *string, monotonic bool) string {
	if !monotonic {
		return "gauge"
	}
	*name += "_total"
	return "counter"
}

func points[N int64 | float64](dps []metricdata.DataPoint[N]) []sample {
	sortPoints(dps, func(p metricdata.DataPoint[N]) attribute.Set { return p.Attributes })
	out := make([]sample, len(dps))
	for i, p := range dps {
		out[i] = sample{labels: labels(p.Attributes), value: number(p.Value)}
	}
	return out
}

// histogram writes each point's cumulative buckets, then its sum and count.
func histogram[N int64 | float64](dps []metricdata.HistogramDataPoint[N]) []sample {
	sortPoints(dps, func(p metricdata.HistogramDataPoint[N]) attribute.Set { return p.Attributes })
	var out []sample
	for _, p := range dps {
		l := labels(p.Attributes)
		var cumulative uint64
		for i, bound := range p.Bounds {
			cumulative += p.BucketCounts[i]
			out = append(out, sample{"_bucket", append(slices.Clip(l), label("le", number(bound))), strconv.FormatUint(cumulative, 10)})
		}
		count := strconv.FormatUint(p.Count, 10)
		out = append(out,
			sample{"_bucket", append(slices.Clip(l), label("le", "+Inf")), count},
			sample{"_sum", l, number(p.Sum)},
			sample{"_count", l, count})
	}
	return out
}

// sortPoints orders points by their labels, so that a family's lines keep
// their order from one scrape to the next.
func sortPoints[P any](dps []P, attrs func(P) attribute.Set) {
	key := func(p P) string {
		set := attrs(p)
		return set.Encoded(attribute.DefaultEncoder())
	}
	slices.SortFunc(dps, func(a, b P) int { return strings.Compare(key(a), key(b)) })
}

// labels writes a point's attributes, which a Set keeps sorted by key.
func labels(set attribute.Set) []string {
	out := make([]string, 0, set.Len())
	for _, kv := range set.ToSlice() {
		out = append(out, label(string(kv.Key), kv.Value.String()))
	}
	return out
}

func label(name, value string) string {
	return promChars(name) + `="` + valueEscaper.Replace(value) + `"`
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
)

// promName is an instrument's name as Prometheus shows it:
// "webhooks.handler.duration" in seconds is
// webhooks_handler_duration_seconds. The units otelwebhooks uses are "s"
// and annotations in braces ("{webhook}"), which add nothing; any other
// unit is appended as it is.
func promName(name, unit string) string {
	switch {
	case unit == "s":
		unit = "seconds"
	case unit == "" || strings.HasPrefix(unit, "{"):
		return promChars(name)
	}
	return promChars(name + "_" + unit)
}

// promChars replaces every character a Prometheus name may not hold with
// '_'.
func promChars(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == ':' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// number writes an integer exactly, a float as Prometheus reads it.
func number[N int64 | float64](n N) string {
	if i, ok := any(n).(int64); ok {
		return strconv.FormatInt(i, 10)
	}
	v := float64(n)
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
