package browserops

import (
	"context"
	"fmt"
	"slices"

	"github.com/guilds/guilds/internal/browserproto"
)

// element is a snapshot reference resolved in the page.
type element struct {
	ref      string
	backend  int64
	objectID string
	desc     string // role "name", for result lines
	// c is the session the element lives in: the page's, or a frame's of
	// another site, whose iframe element in the page is owner.
	c     *conn
	owner int64
}

// resolve finds a reference of the last snapshot in the page. The answer
// to a reference that cannot be used says why and what to do.
func (s *session) resolve(ctx context.Context, ref string) (*element, *browserproto.Response) {
	fail := func(format string, a ...any) (*element, *browserproto.Response) {
		r := browserproto.Errorf(format, a...)
		return nil, &r
	}
	frame, id := refID(ref)
	if s.state.Loader == "" {
		return fail("ref %s: there is no snapshot of this page yet; call browser_snapshot and use a ref from it", ref)
	}
	loader, err := s.loader(ctx)
	if err != nil {
		return fail("ref %s: %v", ref, err)
	}
	if loader != s.state.Loader {
		return fail("ref %s is stale: the page has changed (a new document loaded) since the snapshot that named it; take a fresh browser_snapshot", ref)
	}
	el := &element{ref: ref, backend: id, c: s.c}
	refs := s.state.Refs
	if frame > 0 {
		if frame > len(s.state.Frames) {
			return fail("ref %s is not in the last snapshot; take a fresh browser_snapshot and use a ref from it", ref)
		}
		f := s.state.Frames[frame-1]
		refs, el.owner = f.Refs, f.Owner
		t, ok := s.cfg.targetByID(ctx, f.Target)
		if !ok {
			return fail("ref %s is stale: its frame has gone from the page; take a fresh browser_snapshot", ref)
		}
		if el.c, err = s.frameConn(ctx, t); err != nil {
			return fail("ref %s: %v", ref, err)
		}
	}
	if !slices.Contains(refs, id) {
		return fail("ref %s is not in the last snapshot; take a fresh browser_snapshot and use a ref from it", ref)
	}
	var r struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := el.c.call(ctx, "DOM.resolveNode", params{"backendNodeId": id}, &r); err != nil || r.Object.ObjectID == "" {
		if err != nil && !isCDPError(err) {
			return fail("ref %s: %v", ref, err)
		}
		return fail("ref %s is stale: that element is no longer on the page; take a fresh browser_snapshot", ref)
	}
	el.objectID = r.Object.ObjectID
	var connected bool
	if err := s.callOn(ctx, el, "function() { return this.isConnected }", &connected); err != nil || !connected {
		return fail("ref %s is stale: that element is no longer on the page; take a fresh browser_snapshot", ref)
	}
	el.desc = describe(ctx, el.c, id)
	return el, nil
}

// loader is the main frame's current document.
func (s *session) loader(ctx context.Context) (string, error) {
	var ft struct {
		FrameTree frameTree `json:"frameTree"`
	}
	if err := s.c.call(ctx, "Page.getFrameTree", nil, &ft); err != nil {
		return "", err
	}
	return ft.FrameTree.Frame.LoaderID, nil
}

// describe is an element's role and name, as the snapshot wrote them.
func describe(ctx context.Context, c *conn, backend int64) string {
	var r struct {
		Nodes []*axNode `json:"nodes"`
	}
	if c.call(ctx, "Accessibility.getPartialAXTree", params{"backendNodeId": backend, "fetchRelatives": false}, &r) != nil || len(r.Nodes) == 0 {
		return "element"
	}
	n := r.Nodes[0]
	d := roleLabel(n, n.Role.str())
	if name := n.Name.str(); name != "" {
		d += fmt.Sprintf(" %q", clip(name, 60))
	}
	return d
}

// callOn runs a function with the element as this; out receives its value.
func (s *session) callOn(ctx context.Context, el *element, fn string, out any, args ...any) error {
	var callArgs []map[string]any
	for _, a := range args {
		callArgs = append(callArgs, map[string]any{"value": a})
	}
	var r evalResult
	p := params{"objectId": el.objectID, "functionDeclaration": fn, "returnByValue": true, "awaitPromise": true}
	if len(callArgs) > 0 {
		p["arguments"] = callArgs
	}
	if err := el.c.call(ctx, "Runtime.callFunctionOn", p, &r); err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("%s", r.Exception.message())
	}
	return r.decode(out)
}
