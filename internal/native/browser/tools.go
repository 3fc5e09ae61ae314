package browser

// The eight browser tools.
const (
	ToolNavigate   = "browser_navigate"
	ToolSnapshot   = "browser_snapshot"
	ToolClick      = "browser_click"
	ToolType       = "browser_type"
	ToolFill       = "browser_fill"
	ToolScroll     = "browser_scroll"
	ToolScreenshot = "browser_screenshot"
	ToolEval       = "browser_eval"
)

// Names lists the browser tools in the catalog's order.
var Names = []string{ToolNavigate, ToolSnapshot, ToolClick, ToolType, ToolFill, ToolScroll, ToolScreenshot, ToolEval}

type decl struct {
	name, description, schema string
	idempotent                bool
}

const refSchema = `"ref":{"type":"string","pattern":"^(f[0-9]+)?e[0-9]+$","description":"the element's reference from the last browser_snapshot, such as e12 (or f1e12 inside a frame of another site)"}`

var decls = []decl{
	{name: ToolNavigate, description: "Open a URL in the browser (http or https). Says the final URL, the HTTP status and the " +
		"title; a page that fails to open (DNS, TLS, a refused address, a timeout, an HTTP error status) is an ERROR naming why.",
		schema: `{"type":"object","properties":{
			"url":{"type":"string","minLength":1,"description":"the absolute URL, such as https://example.com/path"}},
			"required":["url"],"additionalProperties":false}`},
	{name: ToolSnapshot, idempotent: true, description: "The current page as a compact accessibility tree: one line per element, " +
		"indented by nesting, role then \"name\"; every element you can act on (and every scrollable panel) carries [ref=eN] for " +
		"browser_click, browser_type, browser_fill and browser_scroll. Refs stay valid until the page changes; take a new snapshot after it does.",
		schema: `{"type":"object","properties":{},"additionalProperties":false}`},
	{name: ToolClick, description: "Click an element of the last snapshot, as a person would (scrolled into view, at its middle). " +
		"Says when the click opened a dialog (accepted) or a new page.",
		schema: `{"type":"object","properties":{` + refSchema + `},"required":["ref"],"additionalProperties":false}`},
	{name: ToolType, description: "Type text into an element as key presses (focus first; \\n presses Enter). " +
		"Use it where keystrokes matter (search boxes, editors); browser_fill sets a field's value at once.",
		schema: `{"type":"object","properties":{` + refSchema + `,
			"text":{"type":"string","description":"the characters to type"}},
			"required":["ref","text"],"additionalProperties":false}`},
	{name: ToolFill, description: "Set a field's value at once: a text input or textarea, a select (by option label or value), " +
		"a checkbox or radio (true or false), an editable region. Input and change events fire as after a person's edit.",
		schema: `{"type":"object","properties":{` + refSchema + `,
			"value":{"type":"string","description":"the new value (an option's label for a select; true or false for a checkbox)"}},
			"required":["ref","value"],"additionalProperties":false}`},
	{name: ToolScroll, description: "Scroll one viewport up, down, left or right: in the page's visible overflow panel when it has one, " +
		"otherwise the window; ref picks the panel (a panel's ref, or any element inside it). Says the position before and after.",
		schema: `{"type":"object","properties":{
			"direction":{"type":"string","enum":["up","down","left","right"],"description":"up, down, left or right"},` + refSchema + `},
			"required":["direction"],"additionalProperties":false}`},
	{name: ToolScreenshot, idempotent: true, description: "Save a JPEG of the browser's viewport to /home/agent/screenshots/latest.jpg " +
		"(replacing the last one) and say its size.",
		schema: `{"type":"object","properties":{},"additionalProperties":false}`},
	{name: ToolEval, description: "Run JavaScript in the current page as the body of an async function (await works; return the value) " +
		"and get its value as JSON. A thrown error, code that does not parse, or a value JSON cannot carry (a DOM node, a function) is an ERROR. " +
		"Keep a snippet you reuse in an agent note and read it back with note_get.",
		schema: `{"type":"object","properties":{
			"script":{"type":"string","minLength":1,"description":"the function body, such as return [...document.querySelectorAll('a')].map(a => a.href)"}},
			"required":["script"],"additionalProperties":false}`},
}
