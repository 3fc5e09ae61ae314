package browserops

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/guilds/guilds/internal/browserproto"
)

// axNode is a node of Chromium's accessibility tree (CDP Accessibility).
type axNode struct {
	NodeID   string   `json:"nodeId"`
	Ignored  bool     `json:"ignored"`
	Role     axValue  `json:"role"`
	Name     axValue  `json:"name"`
	Value    axValue  `json:"value"`
	Props    []axProp `json:"properties"`
	ParentID string   `json:"parentId"`
	Children []string `json:"childIds"`
	Backend  int64    `json:"backendDOMNodeId"`
}

type axValue struct {
	Value any `json:"value"`
}

func (v axValue) str() string {
	switch x := v.Value.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

type axProp struct {
	Name  string  `json:"name"`
	Value axValue `json:"value"`
}

func (n *axNode) prop(name string) (string, bool) {
	for _, p := range n.Props {
		if p.Name == name {
			return p.Value.str(), true
		}
	}
	return "", false
}

// frameTree is Page.getFrameTree's answer.
type frameTree struct {
	Frame struct {
		ID       string `json:"id"`
		LoaderID string `json:"loaderId"`
		URL      string `json:"url"`
	} `json:"frame"`
	Children []frameTree `json:"childFrames"`
}

func snapshot(ctx context.Context, s *session, _ json.RawMessage) browserproto.Response {
	text, meta, err := s.snapshotText(ctx)
	if err != nil {
		return browserproto.Errorf("snapshot: %v", err)
	}
	return browserproto.Response{Text: text, Meta: meta}
}

func (s *session) snapshotText(ctx context.Context) (string, map[string]any, error) {
	var ft struct {
		FrameTree frameTree `json:"frameTree"`
	}
	if err := s.c.call(ctx, "Page.getFrameTree", nil, &ft); err != nil {
		return "", nil, err
	}
	var main struct {
		Nodes []*axNode `json:"nodes"`
	}
	// Enabled, the renderer brings its tree up to date before answering
	// (a frame of another site otherwise answers with a stale one).
	_ = s.c.call(ctx, "Accessibility.enable", nil, nil)
	if err := s.c.call(ctx, "Accessibility.getFullAXTree", nil, &main); err != nil {
		return "", nil, err
	}
	t := &tree{nodes: map[string]*axNode{}, frames: map[int64][]*axNode{}, remote: map[int64]string{},
		frameOf: map[string]int{}, frameRefs: map[int][]int64{}, scrollable: s.scrollables(ctx)}
	prefix := 0
	t.add("", main.Nodes)
	var walk func(fs []frameTree)
	walk = func(fs []frameTree) {
		for _, f := range fs {
			prefix++
			var owner struct {
				BackendNodeID int64 `json:"backendNodeId"`
			}
			var sub struct {
				Nodes []*axNode `json:"nodes"`
			}
			// A cross-origin frame in another process answers neither;
			// it stays an empty iframe line.
			if s.c.call(ctx, "DOM.getFrameOwner", params{"frameId": f.Frame.ID}, &owner) != nil {
				continue
			}
			if s.c.call(ctx, "Accessibility.getFullAXTree", params{"frameId": f.Frame.ID}, &sub) == nil && len(sub.Nodes) > 0 {
				roots := t.add(fmt.Sprintf("f%d:", prefix), sub.Nodes)
				t.frames[owner.BackendNodeID] = append(t.frames[owner.BackendNodeID], roots...)
			} else {
				t.remote[owner.BackendNodeID] = f.Frame.URL
			}
			walk(f.Children)
		}
	}
	walk(ft.FrameTree.Children)
	// A frame of another site runs in another process: named by its URL.
	for _, n := range t.nodes {
		if n.Role.str() != "Iframe" || n.Backend == 0 || len(t.frames[n.Backend]) > 0 || t.remote[n.Backend] != "" {
			continue
		}
		var r struct {
			Object struct {
				ObjectID string `json:"objectId"`
			} `json:"object"`
		}
		if s.c.call(ctx, "DOM.resolveNode", params{"backendNodeId": n.Backend}, &r) != nil {
			continue
		}
		var src string
		if s.callOn(ctx, &element{objectID: r.Object.ObjectID, c: s.c}, "function() { return this.src || '' }", &src) == nil && src != "" {
			t.remote[n.Backend] = src
		}
	}

	frames := s.remoteFrames(ctx, t)

	var title string
	var roots []*axNode
	for _, n := range main.Nodes {
		if n.ParentID == "" {
			roots = append(roots, n)
			if n.Role.str() == "RootWebArea" {
				title = n.Name.str()
			}
		}
	}
	fmt.Fprintf(&t.b, "page %s %q\n", ft.FrameTree.Frame.URL, clip(title, 120))
	for _, r := range roots {
		t.render(r, 0)
	}
	s.state.Loader = ft.FrameTree.Frame.LoaderID
	s.state.Refs = t.refs
	for i := range frames {
		frames[i].Refs = t.frameRefs[i+1]
	}
	s.state.Frames = frames
	return strings.TrimRight(t.b.String(), "\n"), map[string]any{"url": ft.FrameTree.Frame.URL, "refs": len(t.refs)}, nil
}

// scrollables returns the backend ids of the visible overflow panels of
// the main document: the ones browser_scroll moves.
func (s *session) scrollables(ctx context.Context) map[int64]bool {
	out := map[int64]bool{}
	var r struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if err := s.c.call(ctx, "Runtime.evaluate", params{"expression": "(" + findPanelsJS + ")()"}, &r); err != nil || r.Result.ObjectID == "" {
		return out
	}
	defer func() { _ = s.c.call(ctx, "Runtime.releaseObject", params{"objectId": r.Result.ObjectID}, nil) }()
	var props struct {
		Result []struct {
			Name  string `json:"name"`
			Value struct {
				ObjectID string `json:"objectId"`
			} `json:"value"`
		} `json:"result"`
	}
	if s.c.call(ctx, "Runtime.getProperties", params{"objectId": r.Result.ObjectID, "ownProperties": true}, &props) != nil {
		return out
	}
	for _, p := range props.Result {
		if p.Value.ObjectID == "" || p.Name == "length" || p.Name == "__proto__" {
			continue
		}
		var d struct {
			Node struct {
				BackendNodeID int64 `json:"backendNodeId"`
			} `json:"node"`
		}
		if s.c.call(ctx, "DOM.describeNode", params{"objectId": p.Value.ObjectID}, &d) == nil && d.Node.BackendNodeID != 0 {
			out[d.Node.BackendNodeID] = true
		}
	}
	return out
}

// findPanelsJS returns the visible elements that scroll on their own (at
// most 20), largest first.
const findPanelsJS = `function() {
  const out = [];
  for (const e of document.querySelectorAll('body *')) {
    if (e.scrollHeight <= e.clientHeight + 1 && e.scrollWidth <= e.clientWidth + 1) continue;
    const s = getComputedStyle(e);
    const y = /(auto|scroll|overlay)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1;
    const x = /(auto|scroll|overlay)/.test(s.overflowX) && e.scrollWidth > e.clientWidth + 1;
    if (!x && !y) continue;
    const r = e.getBoundingClientRect();
    if (r.width < 1 || r.height < 1 || r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth || s.visibility === 'hidden') continue;
    out.push([r.width * r.height, e]);
  }
  out.sort((a, b) => b[0] - a[0]);
  return out.slice(0, 20).map(p => p[1]);
}`

// remoteFrames brings the frames of another site into the tree: each runs
// in a process of its own, so its tree is read over its own target and its
// references are f<k>e<n>. One level deep: a frame of another site inside
// one stays a line with its URL.
func (s *session) remoteFrames(ctx context.Context, t *tree) []frameRefs {
	if len(t.remote) == 0 {
		return nil
	}
	var list []target
	if s.cfg.getJSON(ctx, http.MethodGet, "/json/list", &list) != nil {
		return nil
	}
	var out []frameRefs
	for _, ft := range list {
		if ft.Type != "iframe" || ft.WS == "" {
			continue
		}
		var owner struct {
			BackendNodeID int64 `json:"backendNodeId"`
		}
		if s.c.call(ctx, "DOM.getFrameOwner", params{"frameId": ft.ID}, &owner) != nil {
			continue
		}
		if _, ok := t.remote[owner.BackendNodeID]; !ok {
			continue
		}
		fc, err := s.frameConn(ctx, ft)
		if err != nil {
			continue
		}
		var sub struct {
			Nodes []*axNode `json:"nodes"`
		}
		_ = fc.call(ctx, "Accessibility.enable", nil, nil)
		if fc.call(ctx, "Accessibility.getFullAXTree", nil, &sub) != nil || len(sub.Nodes) == 0 {
			continue
		}
		k := len(out) + 1
		roots := t.add(fmt.Sprintf("r%d:", k), sub.Nodes)
		for _, n := range sub.Nodes {
			t.frameOf[n.NodeID] = k
		}
		t.frames[owner.BackendNodeID] = roots
		delete(t.remote, owner.BackendNodeID)
		out = append(out, frameRefs{Target: ft.ID, Owner: owner.BackendNodeID})
	}
	return out
}
