package browserops

import (
	"fmt"
	"strings"
)

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
	frameOf    map[string]int      // a node of the k-th frame of another site → k
	frameRefs  map[int][]int64     // that frame's references
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
		if k := t.frameOf[n.NodeID]; k > 0 {
			fmt.Fprintf(&b, " [ref=f%de%d]", k, n.Backend)
			t.frameRefs[k] = append(t.frameRefs[k], n.Backend)
		} else {
			fmt.Fprintf(&b, " [ref=e%d]", n.Backend)
			t.refs = append(t.refs, n.Backend)
		}
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
	if role == "textbox" || role == "searchbox" || role == "spinbutton" {
		return // its text is its value, written above
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
