package browserops

import (
	"context"
	"encoding/json"
	"fmt"
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

// actionable are the roles the tools act on: each carries a reference.
var actionable = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "tab": true, "switch": true, "slider": true, "spinbutton": true, "treeitem": true,
	"MenuListOption": true, "PopUpButton": true, "ToggleButton": true,
}

// transparent roles add nothing to the text: their children stand in
// their place (a reference is still given when they are focusable or
// scrollable).
var transparent = map[string]bool{
	"none": true, "generic": true, "presentation": true, "InlineTextBox": true, "LineBreak": true,
	"paragraph": true, "list": true, "LabelText": true, "group": true, "section": true, "Section": true,
	"RootWebArea": true, "WebArea": true, "LayoutTable": true, "LayoutTableRow": true, "LayoutTableCell": true,
	"rowgroup": true, "strong": true, "emphasis": true, "Abbr": true, "time": true, "subscript": true,
	"superscript": true, "mark": true, "ListMarker": true, "listitem": true, "code": true, "Pre": true, "DescriptionList": true, "Div": true,
	"Canvas": false, "Ruby": true, "blockquote": true, "article": true, "figure": true, "Legend": true,
}

// nameFromContent are the roles whose name is their text, so the text
// below them need not be written again.
var nameFromContent = map[string]bool{
	"button": true, "link": true, "heading": true, "tab": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "option": true, "MenuListOption": true, "treeitem": true, "cell": true, "gridcell": true,
	"columnheader": true, "rowheader": true, "checkbox": true, "radio": true, "switch": true, "tooltip": true,
	"listitem": true, "PopUpButton": true, "ToggleButton": true, "LabelText": true,
}

// roleNames are shorter spellings of common roles.
var roleNames = map[string]string{
	"listitem": "li", "image": "img", "Iframe": "iframe", "MenuListOption": "option", "PopUpButton": "button",
	"ToggleButton": "button", "columnheader": "th", "rowheader": "th", "cell": "td", "gridcell": "td",
	"navigation": "nav", "complementary": "aside", "contentinfo": "footer", "banner": "header",
}

// tree is one snapshot in the making.
type tree struct {
	nodes      map[string]*axNode
	frames     map[int64][]*axNode // an iframe's backend id → its document's roots
	remote     map[int64]string    // an iframe in another process (another site) → its URL
	scrollable map[int64]bool
	refs       []int64
	b          strings.Builder
	prefix     string // the role of a parent merged into the next line ("h2 ")
}

// onlyChild is n's one child worth a line (text aside), or nil.
func (t *tree) onlyChild(n *axNode) *axNode {
	var only *axNode
	for _, id := range n.Children {
		c := t.nodes[id]
		if c == nil {
			continue
		}
		switch c.Role.str() {
		case "StaticText", "InlineTextBox", "LineBreak", "ListMarker":
			continue
		}
		if only != nil {
			return nil
		}
		only = c
	}
	return only
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
	if err := s.c.call(ctx, "Accessibility.getFullAXTree", nil, &main); err != nil {
		return "", nil, err
	}
	t := &tree{nodes: map[string]*axNode{}, frames: map[int64][]*axNode{}, remote: map[int64]string{}, scrollable: s.scrollables(ctx)}
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
		if s.callOn(ctx, &element{objectID: r.Object.ObjectID}, "function() { return this.src || '' }", &src) == nil && src != "" {
			t.remote[n.Backend] = src
		}
	}

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
	return strings.TrimRight(t.b.String(), "\n"), map[string]any{"url": ft.FrameTree.Frame.URL, "refs": len(t.refs)}, nil
}

// add indexes a document's nodes under a prefix (node ids repeat across
// frames) and returns its roots.
func (t *tree) add(prefix string, nodes []*axNode) []*axNode {
	var roots []*axNode
	for _, n := range nodes {
		n.NodeID = prefix + n.NodeID
		if n.ParentID != "" {
			n.ParentID = prefix + n.ParentID
		}
		for i := range n.Children {
			n.Children[i] = prefix + n.Children[i]
		}
		t.nodes[n.NodeID] = n
	}
	for _, n := range nodes {
		if n.ParentID == "" || t.nodes[n.ParentID] == nil {
			roots = append(roots, n)
		}
	}
	return roots
}

// render writes n at depth and its children below it.
func (t *tree) render(n *axNode, depth int) { t.renderIn(n, depth, false) }

// renderIn is render inside a label (labelText) or not.
func (t *tree) renderIn(n *axNode, depth int, labelText bool) {
	role := n.Role.str()
	name := strings.TrimSpace(n.Name.str())
	if role == "ListMarker" {
		return
	}
	if role == "StaticText" {
		if labelText {
			return // a label's text is its field's name
		}
		if txt := clip(name, 300); txt != "" {
			t.line(depth, txt)
		}
		return
	}
	focusable, _ := n.prop("focusable")
	scroll := t.scrollable[n.Backend]
	ref := n.Backend != 0 && !n.Ignored && (actionable[role] || focusable == "true" && !transparentFocus(role) || scroll)
	if role == "RootWebArea" || role == "WebArea" {
		ref = scroll
	}
	if n.Ignored || transparent[role] && !ref && name == "" || transparent[role] && !ref && (role == "RootWebArea" || role == "paragraph" || role == "LabelText") {
		t.childrenIn(n, depth, labelText || role == "LabelText")
		return
	}
	if !ref && name != "" && role != "Iframe" {
		if c := t.onlyChild(n); c != nil && strings.TrimSpace(c.Name.str()) == name {
			t.prefix = roleLabel(n, role) + " "
			t.renderIn(c, depth, labelText)
			return
		}
	}
	var b strings.Builder
	b.WriteString(t.prefix + roleLabel(n, role))
	t.prefix = ""
	if name != "" && role != "row" {
		fmt.Fprintf(&b, " %q", clip(name, 100))
	}
	if ref {
		fmt.Fprintf(&b, " [ref=e%d]", n.Backend)
		t.refs = append(t.refs, n.Backend)
	}
	b.WriteString(attrs(n, role, scroll))
	if role == "row" && t.flatRow(n, &b) {
		t.line(depth, b.String())
		return
	}
	if role == "combobox" || role == "listbox" || role == "PopUpButton" {
		if opts := t.options(n); opts != "" && !t.hasRef(n) {
			b.WriteString(" options: " + opts)
			t.line(depth, b.String())
			return
		}
	}
	if u, ok := t.remote[n.Backend]; ok && role == "Iframe" {
		fmt.Fprintf(&b, " src=%s (another site, not in this snapshot: browser_navigate to it to act inside)", clip(u, 200))
	}
	t.line(depth, b.String())
	if role == "Iframe" {
		for _, r := range t.frames[n.Backend] {
			t.render(r, depth+1)
		}
		return
	}
	if name != "" && nameFromContent[role] && t.textOnly(n) {
		return // the name already says what its text would
	}
	t.children(n, depth+1)
}

func transparentFocus(role string) bool {
	return role == "RootWebArea" || role == "WebArea" || role == "Iframe"
}

func (t *tree) children(n *axNode, depth int) { t.childrenIn(n, depth, false) }

func (t *tree) childrenIn(n *axNode, depth int, labelText bool) {
	for _, id := range n.Children {
		if c := t.nodes[id]; c != nil {
			t.renderIn(c, depth, labelText)
		}
	}
}

func (t *tree) line(depth int, s string) {
	if depth > 30 {
		depth = 30
	}
	t.b.WriteString(strings.Repeat(" ", depth))
	t.b.WriteString(s)
	t.b.WriteByte('\n')
}

// textOnly reports whether n's subtree holds text only (no element with a
// role worth a line), so its name stands for it.
func (t *tree) textOnly(n *axNode) bool {
	for _, id := range n.Children {
		c := t.nodes[id]
		if c == nil {
			continue
		}
		r := c.Role.str()
		if r == "StaticText" || r == "InlineTextBox" || r == "LineBreak" || r == "ListMarker" || r == "image" {
			continue
		}
		if (c.Ignored || transparent[r]) && !t.scrollable[c.Backend] {
			if f, _ := c.prop("focusable"); f != "true" && t.textOnly(c) {
				continue
			}
		}
		return false
	}
	return true
}

// hasRef reports whether some option below n is focusable on its own (a
// listbox of selectable items), so the options need lines of their own.
func (t *tree) hasRef(n *axNode) bool {
	r := n.Role.str()
	return r != "combobox" && r != "PopUpButton"
}

// options lists a select's options in one line: "a|b|c".
func (t *tree) options(n *axNode) string {
	var out []string
	var walk func(id string)
	walk = func(id string) {
		c := t.nodes[id]
		if c == nil {
			return
		}
		if r := c.Role.str(); r == "option" || r == "MenuListOption" {
			o := clip(c.Name.str(), 40)
			if sel, _ := c.prop("selected"); sel == "true" {
				o = "*" + o
			}
			out = append(out, o)
			return
		}
		for _, k := range c.Children {
			walk(k)
		}
	}
	for _, id := range n.Children {
		walk(id)
	}
	if len(out) > 30 {
		out = append(out[:30], fmt.Sprintf("…(%d more)", len(out)-30))
	}
	return strings.Join(out, "|")
}

// flatRow writes a table row of text cells as "row: a | b | c"; false when
// a cell holds something to act on.
func (t *tree) flatRow(n *axNode, b *strings.Builder) bool {
	var cells []string
	for _, id := range n.Children {
		c := t.nodes[id]
		if c == nil {
			continue
		}
		if !t.textOnly(c) {
			return false
		}
		cells = append(cells, clip(c.Name.str(), 80))
	}
	b.WriteString(": " + strings.Join(cells, " | "))
	return true
}

func roleLabel(n *axNode, role string) string {
	if role == "heading" {
		if l, ok := n.prop("level"); ok && l != "" {
			return "h" + l
		}
	}
	if r, ok := roleNames[role]; ok {
		return r
	}
	if transparent[role] {
		return "panel"
	}
	return strings.ToLower(role)
}

// attrs are the states worth knowing before acting.
func attrs(n *axNode, role string, scroll bool) string {
	var b strings.Builder
	if v := n.Value.str(); v != "" && role != "link" && role != "heading" && role != "combobox" {
		fmt.Fprintf(&b, " value=%q", clip(v, 200))
	}
	for _, p := range []string{"checked", "pressed", "selected", "expanded"} {
		switch v, _ := n.prop(p); v {
		case "true":
			b.WriteString(" " + p)
		case "mixed":
			b.WriteString(" " + p + "=mixed")
		case "false":
			if p == "checked" {
				b.WriteString(" un" + p)
			}
		}
	}
	if v, _ := n.prop("disabled"); v == "true" {
		b.WriteString(" disabled")
	}
	if v, _ := n.prop("modal"); v == "true" {
		b.WriteString(" modal")
	}
	if scroll {
		b.WriteString(" scrollable")
	}
	return b.String()
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
