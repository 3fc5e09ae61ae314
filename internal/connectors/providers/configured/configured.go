// Package configured is the provider of no-auth-with-config servers: servers
// that take no login but want values of their own — a workspace id, a
// region, an endpoint — on every request. The catalog row declares the
// fields, an operator fills them in when connecting, the engine stores them
// sealed like any credential (Credential.Extra, no access token, no expiry)
// and this provider injects them: as HTTP headers for a remote server, as
// environment variables for a stdio server the platform runs. It registers
// itself as provider "config".
//
// Catalog row config (mcp_servers.config):
//
//	{
//	  "provider": "config",
//	  "fields": [
//	    {"name": "workspace", "label": "Workspace id", "header": "X-Workspace"},
//	    {"name": "api_base", "env": "ACME_API_BASE", "secret": false},
//	    {"name": "region", "header": "X-Region", "env": "ACME_REGION", "optional": true}
//	  ]
//	}
//
// A field needs a name (lower case letters, digits, "_") and a header, an
// environment variable or both; label defaults to the name. Fields are
// required unless "optional". Fields are secret unless "secret": false: a
// secret value joins the redaction set of every run that can reach the login.
// A non-secret value is stored and handled the same way (sealed, never
// returned nor logged) but is not redacted from tool results, where a short
// everyday value such as "eu" would otherwise be blanked out of any text.
// Other keys of the row (command, args of a stdio server) belong to the
// transport and are left alone.
package configured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
)

// ID is the provider id of catalog rows using configured values.
const ID connectors.ProviderID = "config"

func init() { connectors.Register(plugin{}) }

// Field is one configured value and where it travels.
type Field struct {
	Name     string `json:"name"`
	Label    string `json:"label,omitempty"`
	Header   string `json:"header,omitempty"` // HTTP request header
	Env      string `json:"env,omitempty"`    // environment variable of a stdio server
	Secret   *bool  `json:"secret,omitempty"` // nil: secret
	Optional bool   `json:"optional,omitempty"`
}

func (f Field) secret() bool { return f.Secret == nil || *f.Secret }

// Provider is a configured catalog row; it implements connectors.ConfigProvider.
type Provider struct {
	fields []Field
}

var _ connectors.ConfigProvider = (*Provider)(nil)

// plugin is the registered, unconfigured form.
type plugin struct{}

func (plugin) ID() connectors.ProviderID { return ID }

// CheckCatalog lets the catalog editor refuse a row whose fields Configure
// would refuse.
func (plugin) CheckCatalog(config json.RawMessage) error {
	_, err := Parse(config)
	return err
}

// Configure reads and checks the row's fields.
func (plugin) Configure(pc connectors.ProviderConfig) (connectors.Provider, error) {
	fields, err := Parse(pc.Config)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", pc.Server, err)
	}
	return &Provider{fields: fields}, nil
}

var (
	namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	envPattern  = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
)

// reservedHeaders are set by the HTTP and MCP transports themselves.
var reservedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Content-Type": true, "Transfer-Encoding": true,
	"Connection": true, "Upgrade": true, "Te": true, "Trailer": true, "Accept": true,
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Last-Event-Id": true,
}

// reservedEnv are variables the platform sets for a stdio server itself, or
// that would let a value change what the process loads or runs.
func reservedEnv(name string) bool {
	switch name {
	case "PATH", "HOME", "SHELL", "IFS", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR":
		return true
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_")
}

// Parse reads the fields of a catalog row's config and reports every problem
// with them at once.
func Parse(config json.RawMessage) ([]Field, error) {
	row, err := catalog.ParseConfig(config)
	if err != nil {
		return nil, fmt.Errorf("config provider: config is not an object with a fields list: %v", err)
	}
	if len(row.Fields) == 0 {
		return nil, errors.New(`config provider: config needs a "fields" list naming at least one field`)
	}
	var probs []string
	add := func(i int, format string, args ...any) {
		probs = append(probs, fmt.Sprintf("fields[%d]: ", i)+fmt.Sprintf(format, args...))
	}
	fields := make([]Field, 0, len(row.Fields))
	names, headers, envs := map[string]int{}, map[string]int{}, map[string]int{}
	for i, raw := range row.Fields {
		var f Field
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			add(i, "%s", fieldDecodeError(err))
			continue
		}
		switch j, dup := names[f.Name]; {
		case !namePattern.MatchString(f.Name):
			add(i, "name %q must be lower case letters, digits and _, starting with a letter (at most 64)", f.Name)
		case dup:
			add(i, "name %q is already used by fields[%d]", f.Name, j)
		default:
			names[f.Name] = i
		}
		if f.Header == "" && f.Env == "" {
			add(i, "%s needs a header, an env name or both", f.Name)
		}
		if f.Header != "" {
			canon := http.CanonicalHeaderKey(f.Header)
			switch j, dup := headers[canon]; {
			case !validHeaderName(f.Header):
				add(i, "header %q is not a valid HTTP header name", f.Header)
			case reservedHeaders[canon]:
				add(i, "header %q is set by the transport and cannot be configured", f.Header)
			case dup:
				add(i, "header %q is already sent by fields[%d]", f.Header, j)
			default:
				headers[canon] = i
			}
		}
		if f.Env != "" {
			switch j, dup := envs[f.Env]; {
			case !envPattern.MatchString(f.Env):
				add(i, "env %q must match %s", f.Env, envPattern)
			case reservedEnv(f.Env):
				add(i, "env %q is reserved: the platform sets it or it changes what the process loads", f.Env)
			case dup:
				add(i, "env %q is already set by fields[%d]", f.Env, j)
			default:
				envs[f.Env] = i
			}
		}
		if f.Label == "" {
			f.Label = f.Name
		}
		fields = append(fields, f)
	}
	if len(probs) > 0 {
		return nil, errors.New("config provider: " + strings.Join(probs, "; "))
	}
	return fields, nil
}

func fieldDecodeError(err error) string {
	msg := err.Error()
	if k, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown key " + k + " (known: name, label, header, env, secret, optional)"
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Sprintf("%s must be a %s", te.Field, jsonKind(te.Type.Kind().String()))
	}
	return "must be an object: " + strings.TrimPrefix(msg, "json: ")
}

func jsonKind(goKind string) string {
	if goKind == "bool" || goKind == "ptr" {
		return "boolean"
	}
	return goKind
}

// validHeaderName: an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func (p *Provider) ID() connectors.ProviderID { return ID }

// Fields is the connect form: one input per configured value.
func (p *Provider) Fields() []connectors.KeyField {
	out := make([]connectors.KeyField, len(p.fields))
	for i, f := range p.fields {
		out[i] = connectors.KeyField{Name: f.Name, Label: f.Label, Secret: f.secret(), Optional: f.Optional}
	}
	return out
}

// Inject sends each stored value on its header and into its environment
// variable; an optional field left empty sends nothing.
func (p *Provider) Inject(c connectors.Credential) connectors.Injection {
	var inj connectors.Injection
	for _, f := range p.fields {
		v := c.Extra[f.Name]
		if v == "" {
			continue
		}
		if f.Header != "" {
			if inj.Headers == nil {
				inj.Headers = map[string]string{}
			}
			inj.Headers[f.Header] = v
		}
		if f.Env != "" {
			if inj.Env == nil {
				inj.Env = map[string]string{}
			}
			inj.Env[f.Env] = v
		}
	}
	return inj
}
