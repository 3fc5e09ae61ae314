package telemetry_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// span is one exported span as the receiver decoded it.
type span struct {
	TraceID, SpanID, Parent string
	Name                    string
	Kind                    string
	Attrs                   map[string]string
	Resource                map[string]string
}

// receiver is an OTLP/HTTP traces endpoint: it decodes protobuf and JSON
// export requests, as a collector does, and keeps their spans.
type receiver struct {
	*httptest.Server
	mu    sync.Mutex
	spans []span
	bad   []string
}

func newReceiver(t testing.TB) *receiver {
	r := &receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var in coltracepb.ExportTraceServiceRequest
	var err error
	ct := req.Header.Get("Content-Type")
	switch {
	case req.Method != http.MethodPost || req.URL.Path != "/v1/traces":
		err = errString("want POST /v1/traces, got " + req.Method + " " + req.URL.Path)
	case strings.HasPrefix(ct, "application/x-protobuf"):
		err = proto.Unmarshal(body, &in)
	case strings.HasPrefix(ct, "application/json"):
		err = protojson.Unmarshal(body, &in)
	default:
		err = errString("content type " + ct)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.bad = append(r.bad, err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	for _, rs := range in.ResourceSpans {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, span{TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					Parent: hex.EncodeToString(s.ParentSpanId), Name: s.Name, Kind: s.Kind.String(), Attrs: attrs(s.Attributes), Resource: res})
			}
		}
	}
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *receiver) Spans() []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...)
}

func (r *receiver) Bad() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}

type errString string

func (e errString) Error() string { return string(e) }

// attrs flattens OTLP attributes to their string forms.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		out[kv.Key] = value(kv.Value)
	}
	return out
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_ArrayValue:
		parts := make([]string, len(x.ArrayValue.Values))
		for i, e := range x.ArrayValue.Values {
			parts[i] = value(e)
		}
		return strings.Join(parts, ",")
	default:
		return protojson.Format(v)
	}
}
